package io.kv4j.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.StoreConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The passwords of a config stay out of what is printed (no server needed). */
class EtcdSettingsTest {
  private static final String PASSWORD = "pw-Secret-1357";
  private static final String KEY_STORE_PASSWORD = "ks-Secret-2468";

  private static StoreConfig config() {
    return StoreConfig.builder("etcd")
        .path(Path.of("/stores/a"))
        .option("endpoints", "https://127.0.0.1:2379")
        .option("user", "app")
        .option("password", PASSWORD)
        .option("key-store", "/etc/kv4j/client.p12")
        .option("key-store-password", KEY_STORE_PASSWORD)
        .build();
  }

  @Test
  void settingsToString_namesTheUserAndFiles_notThePasswords() {
    String s = EtcdSettings.of(config()).toString();
    assertThat(s)
        .contains("user=app")
        .contains("/etc/kv4j/client.p12")
        .doesNotContain(PASSWORD)
        .doesNotContain(KEY_STORE_PASSWORD);
  }

  @Test
  void configToString_masksThePasswords_andToUriStillRoundTrips() {
    StoreConfig c = config();
    assertThat(c.toString())
        .contains("user=app")
        .contains("&password=****")
        .contains("key-store-password=****")
        .doesNotContain(PASSWORD)
        .doesNotContain(KEY_STORE_PASSWORD);
    assertThat(StoreConfig.parse(c.toUri())).isEqualTo(c);
    assertThat(StoreConfig.parse(c.toUri()).toUri()).contains(PASSWORD);
  }

  @Test
  void configToString_withoutPasswords_isTheUri() {
    StoreConfig c = StoreConfig.builder("etcd").path(Path.of("/stores/b")).build();
    assertThat(c.toString()).isEqualTo(c.toUri());
  }
}
