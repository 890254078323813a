package io.sluice.flight.loader;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Prints what {@link EpochOrder} and {@link EpochPlan} draw, for the Python package's tests to
 * compare with {@code sluice.order}. Each argument is one question, answered on one line that
 * repeats it:
 *
 * <pre>
 * rank:SHARDS,SEED,EPOCH,RANK,WORLD           rank:...= i j k        (EpochOrder.forRank)
 * plan:SHARDS,SEED,RANK,WORLD,EPOCHS,CURSOR   plan:...= 0:0=i 0:1=j 0:2=end 1:0=k ...   (EpochPlan steps)
 * </pre>
 *
 * <p>java -cp ... io.sluice.flight.loader.PrintEpochOrder rank:10,7,0,1,3 plan:5,-1,0,2,2,0:1
 */
public final class PrintEpochOrder {
  private PrintEpochOrder() {}

  public static void main(String[] args) {
    for (String question : args) {
      int colon = question.indexOf(':');
      if (colon < 0) {
        throw new IllegalArgumentException("a question is rank:... or plan:..., got '" + question + "'");
      }
      String[] a = question.substring(colon + 1).split(",");
      String answer = switch (question.substring(0, colon)) {
        case "rank" -> EpochOrder.forRank(Integer.parseInt(a[0]), Long.parseLong(a[1]), Integer.parseInt(a[2]),
            Integer.parseInt(a[3]), Integer.parseInt(a[4])).stream().map(String::valueOf)
            .collect(Collectors.joining(" "));
        case "plan" -> plan(Integer.parseInt(a[0]), Long.parseLong(a[1]), Integer.parseInt(a[2]),
            Integer.parseInt(a[3]), Integer.parseInt(a[4]), Cursor.parse(a[5]));
        default -> throw new IllegalArgumentException("unknown question '" + question + "'");
      };
      System.out.println(question + "=" + (answer.isEmpty() ? "" : " " + answer));
    }
  }

  private static String plan(int shards, long seed, int rank, int world, int epochs, Cursor from) {
    EpochPlan plan = new EpochPlan(shards, seed, rank, world, epochs, from);
    List<String> steps = new ArrayList<>();
    while (plan.hasNext()) {
      EpochPlan.Step s = plan.next();
      steps.add(s.cursor() + "=" + (s.isEpochEnd() ? "end" : String.valueOf(s.shard())));
    }
    return String.join(" ", steps);
  }
}
