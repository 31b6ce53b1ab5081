/**
 * The {@code kv4j} command-line tool: {@link io.kv4j.cli.Main} and its subcommands (engines, get,
 * put, delete, scan, stats, verify, copy, bench, tck). Every class but {@code Main} is internal.
 * Each run is single-threaded apart from the TCK's own threads.
 */
package io.kv4j.cli;
