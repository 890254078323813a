package io.sluice.examples.trainer;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Logistic regression trained by mini-batch SGD straight over Arrow batches of the feature table
 * (label in column 1, features from column 2): values are read from the vectors' data buffers,
 * never copied into Java objects. Not thread safe: one training thread.
 */
public final class LogisticRegression {
  private final double[] weights;
  private final int miniBatch;
  private final double learningRate;
  private double bias;
  private double lossSum;
  private long seen;

  public LogisticRegression(int features, int miniBatch, double learningRate) {
    this.weights = new double[features];
    this.miniBatch = miniBatch;
    this.learningRate = learningRate;
  }

  /** One SGD step per {@code miniBatch} rows of {@code batch}; the loss is taken before each step. */
  public void train(VectorSchemaRoot batch) {
    int n = batch.getRowCount();
    int k = weights.length;
    ArrowBuf label = ((Float8Vector) batch.getVector(1)).getDataBuffer();
    ArrowBuf[] x = new ArrowBuf[k];
    for (int j = 0; j < k; j++) {
      x[j] = ((Float8Vector) batch.getVector(j + 2)).getDataBuffer();
    }
    double[] gradient = new double[k];
    for (int start = 0; start < n; start += miniBatch) {
      int end = Math.min(n, start + miniBatch);
      java.util.Arrays.fill(gradient, 0);
      double gradientBias = 0;
      for (int r = start; r < end; r++) {
        long at = (long) r * Float8Vector.TYPE_WIDTH;
        double z = bias;
        for (int j = 0; j < k; j++) {
          z += weights[j] * x[j].getDouble(at);
        }
        double p = 1 / (1 + Math.exp(-z));
        double y = label.getDouble(at);
        lossSum += -(y * Math.log(Math.max(p, 1e-12)) + (1 - y) * Math.log(Math.max(1 - p, 1e-12)));
        double error = p - y;
        for (int j = 0; j < k; j++) {
          gradient[j] += error * x[j].getDouble(at);
        }
        gradientBias += error;
      }
      double step = learningRate / (end - start);
      for (int j = 0; j < k; j++) {
        weights[j] -= step * gradient[j];
      }
      bias -= step * gradientBias;
    }
    seen += n;
  }

  /** The mean log loss of the rows trained on since the last call, and resets it. */
  public double takeLoss() {
    double loss = seen == 0 ? Double.NaN : lossSum / seen;
    lossSum = 0;
    seen = 0;
    return loss;
  }
}
