/**
 * The kv4j compatibility kit: extend {@link io.kv4j.tck.StoreTck}. The rules are in {@code
 * tck/SPEC.md}. Tests of one TCK class run sequentially (JUnit's default); the concurrency rules
 * start their own threads.
 */
package io.kv4j.tck;
