package io.kv4j.tck;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The sequential specification the operations of one partition of a {@link History} are checked
 * against: one register per key of the partition, each holding a value or nothing (absent), all
 * absent at the start. A state is an {@code int[]} of value numbers, one per register (0: absent);
 * values are numbered by content, so two puts of equal bytes are the same value.
 *
 * <p>An {@link Operation} steps it in three parts, in this order: its reads must find the values it
 * was answered; its conditions are compared (a condition on absence holds for an absent key); when
 * they all hold its writes are applied in the order made (the last write of a key wins), and a
 * known {@link Operation#answer()} must say whether they held. A single-key partition is the
 * register of put / get / delete and compare-and-set ({@code putIfAbsent}, {@code replace}, {@code
 * delete(key, expected)}); a partition of several keys, joined by batches or snapshot reads, is the
 * multi-register model in which a batch writes its keys at one instant and a snapshot read sees
 * them all at one instant.
 *
 * <p>An operation stepped <em>unchecked</em> (indeterminate, or pending at the end of a prefix) has
 * no answer to match: its reads are ignored and its writes happen exactly when its conditions hold.
 * States are never changed in place, so a state can be kept by the search's memo.
 */
final class RegisterModel {
  /** A key of the store: its keyspace (null for the store's own keys) and its bytes. */
  record Key(String keyspace, ByteBuffer bytes) {
    static Key of(Operation.Cell c) {
      return new Key(c.keyspace(), ByteBuffer.wrap(c.key().clone()));
    }
  }

  /** One operation compiled to register and value numbers. */
  private record Step(
      int[] readRegs,
      int[] readValues,
      int[] conditionRegs,
      int[] conditionValues,
      int[] writeRegs,
      int[] writeValues,
      Boolean answer) {}

  private final List<Key> keys;
  private final Step[] steps;

  /**
   * Compiles the operations of one partition.
   *
   * @param keys the partition's keys: register {@code i} is {@code keys.get(i)}
   * @param ops the partition's operations; every key they name is in {@code keys}
   */
  RegisterModel(List<Key> keys, List<Operation> ops) {
    this.keys = List.copyOf(keys);
    Map<Key, Integer> registers = new HashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      registers.put(keys.get(i), i);
    }
    Map<ByteBuffer, Integer> values = new HashMap<>();
    steps = new Step[ops.size()];
    for (int i = 0; i < ops.size(); i++) {
      Operation o = ops.get(i);
      int[][] r = compile(o.reads(), registers, values);
      int[][] c = compile(o.conditions(), registers, values);
      int[][] w = compile(o.writes(), registers, values);
      steps[i] = new Step(r[0], r[1], c[0], c[1], w[0], w[1], o.answer());
    }
  }

  private static int[][] compile(
      List<Operation.Cell> cells, Map<Key, Integer> registers, Map<ByteBuffer, Integer> values) {
    int[] regs = new int[cells.size()];
    int[] vals = new int[cells.size()];
    for (int i = 0; i < cells.size(); i++) {
      Operation.Cell c = cells.get(i);
      regs[i] = Objects.requireNonNull(registers.get(Key.of(c)), "a key outside the partition");
      vals[i] =
          c.value() == null
              ? 0
              : values.computeIfAbsent(ByteBuffer.wrap(c.value().clone()), v -> values.size() + 1);
    }
    return new int[][] {regs, vals};
  }

  /** The partition's keys, by register. */
  List<Key> keys() {
    return keys;
  }

  /** The state at the start of the history: every key absent. */
  int[] initial() {
    return new int[keys.size()];
  }

  /**
   * The state after operation {@code op}, or null when its answer contradicts {@code state}.
   *
   * @param state the state before; not changed
   * @param op the operation's index in the partition
   * @param checked whether its answer is known and must match (false: indeterminate or pending)
   * @return the new state ({@code state} itself when nothing changed), or null
   */
  int[] step(int[] state, int op, boolean checked) {
    Step s = steps[op];
    if (checked) {
      for (int i = 0; i < s.readRegs.length; i++) {
        if (state[s.readRegs[i]] != s.readValues[i]) {
          return null;
        }
      }
    }
    boolean holds = true;
    for (int i = 0; i < s.conditionRegs.length && holds; i++) {
      holds = state[s.conditionRegs[i]] == s.conditionValues[i];
    }
    if (checked && s.answer != null && s.answer != holds) {
      return null;
    }
    if (!holds || s.writeRegs.length == 0) {
      return state;
    }
    int[] next = state.clone();
    for (int i = 0; i < s.writeRegs.length; i++) {
      next[s.writeRegs[i]] = s.writeValues[i];
    }
    return Arrays.equals(next, state) ? state : next;
  }
}
