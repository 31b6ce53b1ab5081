/**
 * JMH benchmarks of every scenario, with the engine as a {@code @Param} resolved through {@link
 * io.kv4j.Stores#providers()}: any kv4j engine or peer adapter on the classpath can be measured,
 * e.g. {@code java -cp kv4j-bench.jar org.openjdk.jmh.Main -p engine=rocksdb,mvstore readrandom}.
 * Footprint is measured by the runner only.
 */
package io.kv4j.bench.jmh;
