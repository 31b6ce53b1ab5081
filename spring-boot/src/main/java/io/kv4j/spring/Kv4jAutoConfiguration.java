package io.kv4j.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * One {@link io.kv4j.Store} bean per {@code kv4j.stores.<name>} entry, named {@code <name>}: the
 * only one is the primary {@code Store} bean; several are injected by name ({@code @Qualifier}) or
 * as a {@code Map<String, Store>}, and {@code kv4j.stores.<name>.primary=true} makes one primary.
 * Each store opens when its bean is created and is closed once, when the context closes.
 */
@AutoConfiguration
@EnableConfigurationProperties(Kv4jProperties.class)
@Import(StoreRegistrar.class)
public class Kv4jAutoConfiguration {
  /** Created by Spring. */
  public Kv4jAutoConfiguration() {}
}
