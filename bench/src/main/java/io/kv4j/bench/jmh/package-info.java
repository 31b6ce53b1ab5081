/**
 * JMH benchmarks of the scenarios, with the scenario (an id of the catalogue, {@code
 * scenarios.conf}) and the engine as {@code @Param}s, the engine resolved through {@link
 * io.kv4j.bench.Instruments#provider(String)}: any kv4j engine on the classpath or instrument of
 * the bench (peer adapter, raw library, floor) can be measured, e.g. {@code java -cp kv4j-bench.jar
 * org.openjdk.jmh.Main -p engine=rocksdb,mvstore -p scenario=readrandom ScenarioBenchmarks}.
 * Footprint is measured by the runner only.
 */
package io.kv4j.bench.jmh;
