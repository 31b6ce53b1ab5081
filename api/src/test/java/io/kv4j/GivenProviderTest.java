package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.memory.MemoryProvider;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Configs for an engine the registry does not hold: validated against, and opened by, it. */
class GivenProviderTest {
  /** The memory engine under another id, in no META-INF/services file; counts its opens. */
  static final class Unlisted implements StoreProvider {
    static final OptionSpec<Integer> SHARDS = OptionSpec.integer("shards", 1, 1, 64, "", "shards");
    final AtomicInteger opens = new AtomicInteger();

    @Override
    public String id() {
      return "unlisted";
    }

    @Override
    public Set<String> aliases() {
      return Set.of("unlisted-alias");
    }

    @Override
    public String description() {
      return "memory, unregistered";
    }

    @Override
    public Set<Feature> features() {
      return new MemoryProvider().features();
    }

    @Override
    public Limits limits() {
      return new MemoryProvider().limits();
    }

    @Override
    public List<OptionSpec<?>> options() {
      return List.of(SHARDS);
    }

    @Override
    public Store open(StoreConfig config) {
      opens.incrementAndGet();
      return new MemoryProvider().open(config);
    }
  }

  private final Unlisted unlisted = new Unlisted();

  @Test
  void builder_givenProvider_isValidatedAndOpenedByIt() {
    assertThat(Stores.providers()).noneMatch(p -> p.id().equals("unlisted"));
    StoreConfig c = StoreConfig.builderFor(unlisted).option("shards", "4").build();
    assertThat(c.engine()).isEqualTo("unlisted");
    assertThat(c.provider()).isSameAs(unlisted);
    assertThat(c.get(Unlisted.SHARDS)).isEqualTo(4);
    try (Store s = Stores.open(c)) {
      s.put(new byte[] {1}, new byte[] {2});
      assertThat(s.get(new byte[] {1})).containsExactly(2);
    }
    assertThat(unlisted.opens).hasValue(1);
    assertThatThrownBy(() -> StoreConfig.builderFor(unlisted).option("segment-size", "1").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown option 'segment-size' for engine 'unlisted'");
  }

  @Test
  void parse_givenProvider_acceptsItsIdAndAliasesOnly() {
    StoreConfig c = StoreConfig.parse("unlisted-alias:?shards=2&durability=buffered", unlisted);
    assertThat(c.provider()).isSameAs(unlisted);
    assertThat(c.engine()).isEqualTo("unlisted-alias");
    assertThat(c.durability()).isEqualTo(Durability.BUFFERED);
    assertThat(c.get(Unlisted.SHARDS)).isEqualTo(2);
    assertThatThrownBy(() -> StoreConfig.parse("memory:", unlisted))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("names engine 'memory', not 'unlisted'");
    assertThatThrownBy(() -> StoreConfig.parse("unlisted:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown engine 'unlisted'");
  }

  @Test
  void toBuilderAndWithPath_keepTheGivenProvider() {
    StoreConfig c = StoreConfig.parse("unlisted:?shards=3", unlisted);
    StoreConfig moved = c.withPath(Path.of("elsewhere"));
    assertThat(moved.provider()).isSameAs(unlisted);
    assertThat(moved.path()).isEqualTo(Path.of("elsewhere"));
    assertThat(c.toBuilder().readOnly(true).build().provider()).isSameAs(unlisted);
    Stores.open(moved).close();
    assertThat(unlisted.opens).hasValue(1);
  }

  @Test
  void provider_ofARegistryConfig_isTheRegistrysEngine() {
    StoreConfig c = StoreConfig.parse("memory:");
    assertThat(c.provider()).isSameAs(Stores.provider("memory"));
    assertThat(c.withPath(Path.of("x")).provider()).isSameAs(Stores.provider("memory"));
  }
}
