package com.example.springapp;

import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application with two kv4j stores, configured in application.yml: orders on hashlog,
 * sessions on sqlite. The starter opens them as beans, reports their health under {@code kv4j} and
 * meters them; the context closes them at exit.
 */
@SpringBootApplication
public class SpringApp {

  /**
   * Starts the application, places an order and prints it back.
   *
   * @param args Spring Boot arguments, such as {@code --app.data-dir=/var/lib/app}
   */
  public static void main(String[] args) {
    SpringApplication.run(SpringApp.class, args);
  }

  @Bean
  CommandLineRunner demo(OrderBook orders) {
    return args -> {
      orders.place("alice", "order-1", "pizza");
      System.out.println("alice's last order: " + orders.lastOrderOf("alice"));
    };
  }
}
