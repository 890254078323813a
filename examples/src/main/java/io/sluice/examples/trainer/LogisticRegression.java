package io.sluice.examples.trainer;

import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;

/**
 * Logistic regression trained by mini-batch SGD over Arrow batches of the feature table (label in
 * column 1, {@code width} float64 features from column 2, then a list of {@code dims}
 * float32): each step works on whole buffers, the way a GPU kernel would. A batch's columns are
 * copied in bulk out of the Arrow buffers into reused primitive arrays (no per-row objects), then
 * every mini-batch computes its logits as column-wise multiply-adds and dense dot products, and
 * its gradient as the transposed products. Not thread safe: one training thread.
 */
public final class LogisticRegression {
  private final int width;
  private final int dims;
  private final int miniBatch;
  private final double learningRate;
  private final double[] weights;
  private final float[] denseWeights;
  private final double[] gradient;
  private final float[] denseGradient;
  private double bias;
  private double lossSum;
  private long seen;
  // Reused per batch, grown to the largest batch seen.
  private double[] labels = new double[0];
  private double[][] columns;
  private float[] dense = new float[0];
  private double[] logits = new double[0];

  public LogisticRegression(int width, int dims, int miniBatch, double learningRate) {
    this.width = width;
    this.dims = dims;
    this.miniBatch = miniBatch;
    this.learningRate = learningRate;
    this.weights = new double[width];
    this.denseWeights = new float[dims];
    this.gradient = new double[width];
    this.denseGradient = new float[dims];
    this.columns = new double[width][0];
  }

  /** One SGD step per {@code miniBatch} rows of {@code batch}; the loss is taken before each step. */
  public void train(VectorSchemaRoot batch) {
    int n = batch.getRowCount();
    if (batch.getFieldVectors().size() != width + 3) {
      throw new IllegalArgumentException("expected user_id, label, " + width + " features and the dense block, got "
          + batch.getSchema());
    }
    load(batch, n);
    for (int start = 0; start < n; start += miniBatch) {
      step(start, Math.min(n, start + miniBatch));
    }
    seen += n;
  }

  private void load(VectorSchemaRoot batch, int n) {
    if (labels.length < n) {
      labels = new double[n];
      logits = new double[n];
      for (int j = 0; j < width; j++) {
        columns[j] = new double[n];
      }
      dense = new float[n * dims];
    }
    copy(((Float8Vector) batch.getVector(1)).getDataBuffer(), labels, n);
    for (int j = 0; j < width; j++) {
      copy(((Float8Vector) batch.getVector(j + 2)).getDataBuffer(), columns[j], n);
    }
    // Spark's array<float>: a list whose rows all hold dims values, one after the other.
    ListVector list = (ListVector) batch.getVector(width + 2);
    int first = list.getOffsetBuffer().getInt(0);
    int last = list.getOffsetBuffer().getInt((long) n * ListVector.OFFSET_WIDTH);
    if (last - first != n * dims) {
      throw new IllegalArgumentException("the dense block has " + (last - first) + " values for " + n + " rows of "
          + dims);
    }
    ArrowBuf values = list.getDataVector().getDataBuffer();
    values.nioBuffer((long) first * Float.BYTES, n * dims * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer()
        .get(dense, 0, n * dims);
  }

  private static void copy(ArrowBuf buf, double[] to, int n) {
    buf.nioBuffer(0, n * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(to, 0, n);
  }

  private void step(int start, int end) {
    Arrays.fill(logits, start, end, bias);
    for (int j = 0; j < width; j++) {
      double w = weights[j];
      double[] x = columns[j];
      for (int r = start; r < end; r++) {
        logits[r] += w * x[r];
      }
    }
    for (int r = start; r < end; r++) {
      int at = r * dims;
      // four partial sums: independent chains the CPU can overlap
      float z0 = 0;
      float z1 = 0;
      float z2 = 0;
      float z3 = 0;
      int d = 0;
      for (; d + 3 < dims; d += 4) {
        z0 += denseWeights[d] * dense[at + d];
        z1 += denseWeights[d + 1] * dense[at + d + 1];
        z2 += denseWeights[d + 2] * dense[at + d + 2];
        z3 += denseWeights[d + 3] * dense[at + d + 3];
      }
      for (; d < dims; d++) {
        z0 += denseWeights[d] * dense[at + d];
      }
      logits[r] += (z0 + z1) + (z2 + z3);
    }
    double gradientBias = 0;
    for (int r = start; r < end; r++) {
      double p = 1 / (1 + Math.exp(-logits[r]));
      double y = labels[r];
      lossSum += -(y * Math.log(Math.max(p, 1e-12)) + (1 - y) * Math.log(Math.max(1 - p, 1e-12)));
      logits[r] = p - y; // from here on: the error
      gradientBias += logits[r];
    }
    for (int j = 0; j < width; j++) {
      double g = 0;
      double[] x = columns[j];
      for (int r = start; r < end; r++) {
        g += logits[r] * x[r];
      }
      gradient[j] = g;
    }
    Arrays.fill(denseGradient, 0);
    for (int r = start; r < end; r++) {
      float e = (float) logits[r];
      int at = r * dims;
      for (int d = 0; d < dims; d++) {
        denseGradient[d] += e * dense[at + d];
      }
    }
    double step = learningRate / (end - start);
    for (int j = 0; j < width; j++) {
      weights[j] -= step * gradient[j];
    }
    // The dense block has many inputs of similar scale: its step is divided among them.
    double denseStep = step / dims;
    for (int d = 0; d < dims; d++) {
      denseWeights[d] -= (float) (denseStep * denseGradient[d]);
    }
    bias -= step * gradientBias;
  }

  /** The mean log loss of the rows trained on since the last call, and resets it. */
  public double takeLoss() {
    double loss = seen == 0 ? Double.NaN : lossSum / seen;
    lossSum = 0;
    seen = 0;
    return loss;
  }
}
