package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.bench.Mix.Operation;
import io.kv4j.bench.Scenario.Distribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A workload described by files and --set flags: read, checked, and what it runs. */
class WorkloadDescriptionTest {
  @TempDir Path tmp;

  private static WorkloadDescription sets(String... sets) {
    return WorkloadDescription.of(List.of(), List.of(sets));
  }

  /** The mix as operation -> share, for comparing with YCSB's documented proportions. */
  private static Map<Operation, Double> shares(WorkloadDescription w) {
    return w.mix().steps().stream().collect(Collectors.toMap(Mix.Step::operation, Mix.Step::share));
  }

  /** YCSB's core workloads as its documentation gives them: proportions and request keys. */
  private static final Map<String, Map<Operation, Double>> YCSB =
      Map.of(
          "workloada", Map.of(Operation.READ, 0.5, Operation.UPDATE, 0.5),
          "workloadb", Map.of(Operation.READ, 0.95, Operation.UPDATE, 0.05),
          "workloadc", Map.of(Operation.READ, 1.0),
          "workloadd", Map.of(Operation.READ, 0.95, Operation.INSERT, 0.05),
          "workloade", Map.of(Operation.SCAN, 0.95, Operation.INSERT, 0.05),
          "workloadf", Map.of(Operation.READ, 0.5, Operation.READ_MODIFY_WRITE, 0.5));

  @Test
  void of_theSixShippedWorkloads_fromTheJarAndFromBenchWorkloads_matchYcsbCoreWorkloads()
      throws Exception {
    assertThat(WorkloadDescription.SHIPPED).containsExactlyInAnyOrderElementsOf(YCSB.keySet());
    for (String name : WorkloadDescription.SHIPPED) {
      Path file = Path.of("workloads", name);
      assertThat(WorkloadDescription.shipped(name))
          .as("the jar's %s is bench/workloads/%s", name, name)
          .isEqualTo(Files.readString(file));
      for (WorkloadDescription w :
          List.of(
              WorkloadDescription.of(List.of(name), List.of()),
              WorkloadDescription.of(List.of(file.toString()), List.of()))) {
        assertThat(shares(w)).as(name).isEqualTo(YCSB.get(name));
        assertThat(w.name()).isEqualTo(name);
        assertThat(w.requests())
            .as(name)
            .isEqualTo(name.equals("workloadd") ? Distribution.LATEST : Distribution.YCSB_ZIPFIAN);
        assertThat(w.valueSizes())
            .as(name)
            .isEqualTo(new ValueSizes(10, 100, ValueSizes.Shape.CONSTANT));
        assertThat(w.durability()).isEqualTo(Durability.BUFFERED);
        assertThat(w.threads()).isEqualTo(1);
      }
    }
    Mix.Step scan = WorkloadDescription.of(List.of("workloade"), List.of()).mix().steps().get(0);
    assertThat(scan.operation()).isEqualTo(Operation.SCAN);
    assertThat(scan.minLength()).isEqualTo(1);
    assertThat(scan.maxLength()).as("YCSB E: maxscanlength=100").isEqualTo(100);
    assertThat(scan.zipfianLengths()).as("YCSB E: scanlengthdistribution=uniform").isFalse();
  }

  @Test
  void of_setsAfterFiles_theLaterValueWins_andEveryPropertyIsTyped() throws Exception {
    Path mine = tmp.resolve("my.properties");
    Files.writeString(
        mine,
        "# mine\nrecordcount=300\nreadproportion=0.6\nupdateproportion=0.4\n"
            + "fieldlengthdistribution=zipfian\nscanlengthdistribution=zipfian\n");
    WorkloadDescription w =
        WorkloadDescription.of(
            List.of("workloadb", mine.toString()),
            List.of(
                "recordcount=500",
                "recordcount=700",
                "operationcount=900",
                "threadcount=3",
                "kv4j.keylength=24",
                "kv4j.durability=SYNC",
                "fieldcount=2",
                "fieldlength=50",
                "requestdistribution=uniform"));
    assertThat(w.name()).isEqualTo("my");
    assertThat(w.sources()).containsExactly("shipped workloadb", mine.toString(), "--set");
    assertThat(w.recordCount()).as("the last --set").isEqualTo(700);
    assertThat(w.operationCount()).isEqualTo(900);
    assertThat(w.threads()).isEqualTo(3);
    assertThat(w.keyLength()).isEqualTo(24);
    assertThat(w.durability()).isEqualTo(Durability.SYNC);
    assertThat(w.requests()).as("--set over workloadb's zipfian").isEqualTo(Distribution.UNIFORM);
    assertThat(shares(w))
        .as("my file over workloadb")
        .isEqualTo(Map.of(Operation.READ, 0.6, Operation.UPDATE, 0.4));
    assertThat(w.valueSizes()).isEqualTo(new ValueSizes(2, 50, ValueSizes.Shape.ZIPFIAN));
    assertThat(w.given()).contains("recordcount=700 (--set)", "readproportion=0.6 (" + mine + ")");
    Scenario s = w.scenario();
    assertThat(s.id()).isEqualTo(Scenario.YOURS);
    assertThat(s.operations()).isEqualTo(900);
    assertThat(s.kind()).isEqualTo(Scenario.Kind.TIMED);
    assertThat(s.onMainStore()).isTrue();
  }

  @Test
  void of_setsAlone_startFromYcsbDefaults() {
    WorkloadDescription w = sets("readproportion=0.9", "updateproportion=0.1");
    assertThat(w.name()).isEqualTo("your workload");
    assertThat(w.requests()).isEqualTo(Distribution.UNIFORM);
    assertThat(w.valueSizes().max()).as("YCSB: 10 fields of 100 bytes").isEqualTo(1000);
    assertThat(w.recordCount()).isEqualTo(100_000);
    assertThat(shares(sets())).isEqualTo(Map.of(Operation.READ, 0.95, Operation.UPDATE, 0.05));
  }

  @Test
  void of_unknownProperty_namesItWhereItCameFromAndTheKnownOnes() throws Exception {
    assertThatThrownBy(() -> sets("readprop=0.5"))
        .hasMessageStartingWith("unknown workload property 'readprop' (in --set); known: ")
        .hasMessageContaining("recordcount, operationcount, threadcount, readproportion")
        .hasMessageContaining("kv4j.keylength, kv4j.durability");
    Path f = tmp.resolve("w");
    Files.writeString(f, "readproportion=1\nupdateproportion=0\nhotspotdatafraction=0.2\n");
    assertThatThrownBy(() -> WorkloadDescription.of(List.of(f.toString()), List.of()))
        .hasMessageStartingWith("unknown workload property 'hotspotdatafraction' (in " + f + ")");
    assertThatThrownBy(() -> sets("recordcount"))
        .hasMessage("--set expects PROPERTY=VALUE, got 'recordcount'");
  }

  @Test
  void of_proportionsNotAddingUpToOne_areRefusedWithEachTerm_withinTheToleranceAccepted() {
    assertThatThrownBy(() -> sets("readproportion=0.9", "updateproportion=0.05"))
        .hasMessageStartingWith(
            "the workload's proportions must add up to 1 (within 1e-9), got 0.95")
        .hasMessageContaining("readproportion=0.9 (--set), updateproportion=0.05 (--set)")
        .hasMessageContaining("insertproportion=0 (default)");
    assertThatThrownBy(
            () -> sets("readproportion=0.95", "updateproportion=0.05", "scanproportion=0.000001"))
        .hasMessageContaining("must add up to 1");
    // 0.1 + 0.2 + 0.7 is 0.9999999999999999 in doubles: within 1e-9.
    WorkloadDescription w =
        sets("readproportion=0.1", "updateproportion=0.2", "insertproportion=0.7");
    assertThat(w.mix().steps()).hasSize(3);
    assertThat(w.mix().toString()).isEqualTo("10% read, 20% update, 70% insert");
  }

  @Test
  void of_badValues_nameThePropertyTheValueAndWhy() {
    assertThatThrownBy(() -> sets("recordcount=lots"))
        .hasMessage("workload property recordcount='lots' (--set): not a whole number");
    assertThatThrownBy(() -> sets("operationcount=0"))
        .hasMessage("workload property operationcount='0' (--set): must be 1..2147483647");
    assertThatThrownBy(() -> sets("threadcount=65"))
        .hasMessage("workload property threadcount='65' (--set): must be 1..64");
    assertThatThrownBy(() -> sets("readproportion=most"))
        .hasMessage("workload property readproportion='most' (--set): not a number");
    assertThatThrownBy(() -> sets("readproportion=1.5"))
        .hasMessage("workload property readproportion='1.5' (--set): a proportion is 0..1");
    assertThatThrownBy(() -> sets("readproportion=NaN"))
        .hasMessage("workload property readproportion='NaN' (--set): a proportion is 0..1");
    assertThatThrownBy(() -> sets("requestdistribution=hotspot"))
        .hasMessage(
            "workload property requestdistribution='hotspot' (--set): uniform, zipfian or latest");
    assertThatThrownBy(() -> sets("scanlengthdistribution=latest"))
        .hasMessageContaining("scanlengthdistribution='latest' (--set): uniform or zipfian");
    assertThatThrownBy(() -> sets("fieldlengthdistribution=histogram"))
        .hasMessageContaining(
            "fieldlengthdistribution='histogram' (--set): constant, uniform or zipfian");
    assertThatThrownBy(() -> sets("kv4j.durability=fsync"))
        .hasMessage("workload property kv4j.durability='fsync' (--set): buffered or sync");
    assertThatThrownBy(() -> sets("kv4j.keylength=4"))
        .hasMessage("workload property kv4j.keylength='4' (--set): must be 8..1048576");
    assertThatThrownBy(() -> sets("minscanlength=10", "maxscanlength=5"))
        .hasMessage("workload property maxscanlength='5' (--set): below minscanlength=10");
    assertThatThrownBy(() -> sets("fieldcount=1", "fieldlength=10"))
        .hasMessageContaining("fieldcount=1 (--set) and fieldlength=10 (--set)")
        .hasMessageContaining("below the bench's minimum of 16 bytes");
    assertThatThrownBy(() -> sets("readallfields=false"))
        .hasMessageContaining("a kv4j get always returns the whole value");
    assertThatThrownBy(() -> sets("writeallfields=maybe"))
        .hasMessage("workload property writeallfields='maybe' (--set): true or false");
    assertThatThrownBy(() -> sets("workload=site.ycsb.workloads.TimeSeriesWorkload"))
        .hasMessageContaining("only YCSB's CoreWorkload");
    assertThatThrownBy(() -> WorkloadDescription.of(List.of("workloadz"), List.of()))
        .hasMessageStartingWith("no workload file workloadz; shipped workloads")
        .hasMessageContaining("workloada, workloadb");
  }

  @Test
  void options_workload_setsKeysSizesThreadsDurabilityAndRunsItFirst() {
    Options o =
        Options.parse(
            "--workload",
            "workloade",
            "--set",
            "recordcount=200",
            "--set=threadcount=2",
            "--set",
            "kv4j.durability=sync",
            "--scenarios",
            "readrandom,fillrandom");
    assertThat(o.keys).isEqualTo(200);
    assertThat(o.threads).containsExactly(2);
    assertThat(o.durability).isEqualTo(Durability.SYNC);
    assertThat(o.valueSize).isEqualTo(1000);
    assertThat(o.keySize).isEqualTo(16);
    assertThat(Catalogue.ids(o.scenarios))
        .containsExactly("fillrandom", Scenario.YOURS, "footprint", "readrandom");
    assertThat(o.scenarios.get(1).needsOrderedScan()).isTrue();
    assertThat(Options.parse("--keys", "5").workload).isNull();
  }

  @Test
  void options_flagsTheWorkloadSetsOtherwise_areRefusedNamingTheProperty() {
    assertThatThrownBy(() -> Options.parse("--workload", "workloada", "--keys", "5"))
        .hasMessage("--keys does not go with --workload/--set: use --set recordcount=...");
    assertThatThrownBy(() -> Options.parse("--set", "readproportion=1", "--threads", "2"))
        .hasMessageContaining("use --set threadcount=...");
    assertThatThrownBy(() -> Options.parse("--value-size", "64", "--workload", "workloada"))
        .hasMessageContaining("use --set fieldcount=... --set fieldlength=...");
    assertThatThrownBy(() -> Options.parse("--workload", "workloada", "--durability", "sync"))
        .hasMessageContaining("use --set kv4j.durability=...");
  }
}
