package com.example.springapp;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.kv4j.Store;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;

/**
 * Orders by id in one store, each user's last order id in the other. Not named {@code Orders}: its
 * bean would be named {@code orders} and clash with the store's (the starter refuses to start).
 */
@Component
public class OrderBook {
  private final Store orders;
  private final Store sessions;

  /**
   * Takes both stores, each by its name in application.yml.
   *
   * @param orders the {@code kv4j.stores.orders} store
   * @param sessions the {@code kv4j.stores.sessions} store
   */
  public OrderBook(@Qualifier("orders") Store orders, @Qualifier("sessions") Store sessions) {
    this.orders = orders;
    this.sessions = sessions;
  }

  /**
   * Records an order as the user's last.
   *
   * @param user who ordered
   * @param id the order's id
   * @param item what was ordered
   */
  public void place(String user, String id, String item) {
    orders.put(id.getBytes(UTF_8), item.getBytes(UTF_8));
    sessions.put(user.getBytes(UTF_8), id.getBytes(UTF_8));
  }

  /**
   * The item of a user's last order.
   *
   * @param user the user
   * @return the item, or null if the user has not ordered
   */
  public String lastOrderOf(String user) {
    byte[] id = sessions.get(user.getBytes(UTF_8));
    byte[] item = id == null ? null : orders.get(id);
    return item == null ? null : new String(item, UTF_8);
  }
}
