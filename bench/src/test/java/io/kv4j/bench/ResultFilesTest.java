package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** results.csv and results.json from fixed rows. */
class ResultFilesTest {
  private static final Result ROW =
      new Result(
              "hashlog",
              "churn",
              "uniform",
              2,
              Durability.BUFFERED,
              4000,
              1.5,
              2666.6667,
              1.234,
              5.678,
              9.1,
              12,
              3.25,
              0.125,
              2048,
              1024,
              null)
          .with(2048, 1024, figures());

  private static Map<String, Double> figures() {
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("rounds-done", 2.0);
    f.put("worst-disk-per-live", 2.75);
    f.put("engine-space-amplification", Double.NaN);
    return f;
  }

  @Test
  void csv_oneLinePerRow_figuresLast_errorsQuoted() {
    Result failed =
        Result.failed("lmdb", "scan", "", 1, Durability.SYNC, "VerificationException: \"x\", y");
    List<String> lines = ResultFiles.csv(List.of(ROW, failed)).lines().toList();
    assertThat(lines.get(0)).endsWith(",disk_bytes,live_bytes,error,figures");
    assertThat(lines.get(1))
        .isEqualTo(
            "hashlog,churn,uniform,2,BUFFERED,4000,1.500,2666.7,1.23,5.68,9.10,12.00,3.250,0.125,"
                + "2048,1024,,rounds-done=2;worst-disk-per-live=2.75000;"
                + "engine-space-amplification=null");
    assertThat(lines.get(2)).endsWith(",\"VerificationException: \"\"x\"\", y\",");
  }

  @Test
  void csvAndJson_sameFieldsInTheSameOrderWithTheSameNumberFormats() {
    Result failed =
        Result.failed("lmdb", "scan", "", 1, Durability.SYNC, "VerificationException: \"x\", y");
    Outcome o = ReportTest.outcome("hashlog,lmdb", ROW, failed);
    assertThat(ResultFiles.csv(List.of(ROW, failed)))
        .isEqualTo(
            "engine,scenario,phase,threads,durability,ops,seconds,ops_per_sec,p50_us,p99_us,"
                + "p999_us,max_us,cpu_us_per_op,bg_cpu_share,disk_bytes,live_bytes,error,figures\n"
                + "hashlog,churn,uniform,2,BUFFERED,4000,1.500,2666.7,1.23,5.68,9.10,12.00,3.250,"
                + "0.125,2048,1024,,rounds-done=2;worst-disk-per-live=2.75000;"
                + "engine-space-amplification=null\n"
                + "lmdb,scan,,1,SYNC,0,0.000,0.0,0.00,0.00,0.00,0.00,0.000,0.000,0,0,"
                + "\"VerificationException: \"\"x\"\", y\",\n");
    assertThat(ResultFiles.json(o, List.of()))
        .contains(
            "\"results\": [\n"
                + "    {\"engine\": \"hashlog\", \"scenario\": \"churn\", \"phase\": \"uniform\","
                + " \"threads\": 2, \"durability\": \"BUFFERED\", \"ops\": 4000, \"seconds\": 1.500,"
                + " \"opsPerSec\": 2666.7, \"p50Us\": 1.23, \"p99Us\": 5.68, \"p999Us\": 9.10,"
                + " \"maxUs\": 12.00, \"cpuUsPerOp\": 3.250, \"bgCpuShare\": 0.125,"
                + " \"diskBytes\": 2048, \"liveBytes\": 1024, \"error\": null, \"figures\":"
                + " {\"rounds-done\": 2, \"worst-disk-per-live\": 2.75000,"
                + " \"engine-space-amplification\": null}},\n"
                + "    {\"engine\": \"lmdb\", \"scenario\": \"scan\", \"phase\": \"\","
                + " \"threads\": 1, \"durability\": \"SYNC\", \"ops\": 0, \"seconds\": 0.000,"
                + " \"opsPerSec\": 0.0, \"p50Us\": 0.00, \"p99Us\": 0.00, \"p999Us\": 0.00,"
                + " \"maxUs\": 0.00, \"cpuUsPerOp\": 0.000, \"bgCpuShare\": 0.000,"
                + " \"diskBytes\": 0, \"liveBytes\": 0,"
                + " \"error\": \"VerificationException: \\\"x\\\", y\", \"figures\": {}}\n"
                + "  ],");
  }

  @Test
  void json_everyRowTheAdviceAndNullsForWhatWasNotRun() {
    Outcome o =
        ReportTest.outcome("hashlog", ROW)
            .withSettings(Map.of("hashlog", Map.of("durability", "buffered")), List.of(), "env");
    String json = ResultFiles.json(o, List.of("**pick** \"x\""));
    assertThat(json)
        .startsWith("{\n  \"command\": \"java -jar bench/target/kv4j-bench.jar --engines hashlog\"")
        .contains("\"environment\": \"env\"")
        .contains("\"quietness\": null")
        .contains("\"settings\": {\n    \"hashlog\": {\"durability\": \"buffered\"}\n  }")
        .contains(
            "{\"engine\": \"hashlog\", \"scenario\": \"churn\", \"phase\": \"uniform\","
                + " \"threads\": 2, \"durability\": \"BUFFERED\", \"ops\": 4000, \"seconds\": 1.500,"
                + " \"opsPerSec\": 2666.7")
        .contains(
            "\"error\": null, \"figures\": {\"rounds-done\": 2, \"worst-disk-per-live\": 2.75000,"
                + " \"engine-space-amplification\": null}}")
        .contains("\"conformance\": null")
        .contains("\"abstraction\": []")
        .endsWith("\"advice\": [\n    \"**pick** \\\"x\\\"\"\n  ]\n}\n");
  }
}
