package io.kv4j.spring;

import io.kv4j.Store;
import io.kv4j.micrometer.MeteredStore;
import io.kv4j.micrometer.StoreMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Wraps each configured store's bean in a {@link MeteredStore} and binds its {@link StoreMetrics}
 * to the application's {@link MeterRegistry}, as the bean is created; a store bean of the
 * application's own is left alone. Without a registry bean the stores are left unmetered.
 */
final class StoreMetering implements BeanPostProcessor, BeanFactoryAware {
  private final ObjectProvider<MeterRegistry> registry;
  private final Duration statsMaxAge;
  private ConfigurableListableBeanFactory beanFactory;

  StoreMetering(ObjectProvider<MeterRegistry> registry, Duration statsMaxAge) {
    this.registry = registry;
    this.statsMaxAge = statsMaxAge;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    if (beanFactory instanceof ConfigurableListableBeanFactory f) {
      this.beanFactory = f;
    }
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
    if (!(bean instanceof Store store) || bean instanceof MeteredStore) {
      return bean;
    }
    String name = storeName(beanName);
    if (name == null) {
      return bean;
    }
    MeterRegistry meters = registry.getIfUnique();
    if (meters == null) {
      return bean;
    }
    new StoreMetrics(store, name, statsMaxAge).bindTo(meters);
    return MeteredStore.wrap(store, meters, name);
  }

  private String storeName(String beanName) {
    if (beanFactory == null) {
      return null;
    }
    try {
      Object name =
          beanFactory.getMergedBeanDefinition(beanName).getAttribute(StoreRegistrar.STORE_NAME);
      return name instanceof String s ? s : null;
    } catch (NoSuchBeanDefinitionException e) {
      return null; // a bean registered as an object, without a definition
    }
  }
}
