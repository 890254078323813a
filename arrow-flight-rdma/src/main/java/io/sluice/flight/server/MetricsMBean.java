package io.sluice.flight.server;

import io.sluice.transport.metrics.Metric;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's metrics as read-only JMX attributes, one per metric (its name; its unit in the
 * description), read from a fresh snapshot each time. Registered with the platform MBean server
 * by {@link #register} and taken out by {@link #close}. Thread safe.
 */
public final class MetricsMBean implements DynamicMBean, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsMBean.class);

  private final Supplier<List<Metric>> snapshot;
  private final MBeanInfo info;
  private final ObjectName name;

  private MetricsMBean(ObjectName name, Supplier<List<Metric>> snapshot) {
    this.name = name;
    this.snapshot = snapshot;
    List<Metric> now = snapshot.get();
    MBeanAttributeInfo[] attributes = new MBeanAttributeInfo[now.size()];
    for (int i = 0; i < attributes.length; i++) {
      Metric m = now.get(i);
      attributes[i] = new MBeanAttributeInfo(m.name(), "long", m.kind().name().toLowerCase(Locale.ROOT)
          + ", " + m.unit().label(), true, false, false);
    }
    this.info = new MBeanInfo(MetricsMBean.class.getName(), "Sluice metrics", attributes, null, null, null);
  }

  /**
   * Registers the metrics of {@code snapshot} as {@code name} (e.g. {@code
   * io.sluice:type=FlightServer,port=8815}); one already there under that name is replaced.
   *
   * @throws IllegalArgumentException for a malformed name
   */
  public static MetricsMBean register(String name, Supplier<List<Metric>> snapshot) {
    ObjectName objectName;
    try {
      objectName = new ObjectName(name);
    } catch (JMException e) {
      throw new IllegalArgumentException("not a JMX object name: '" + name + "': " + e.getMessage(), e);
    }
    MetricsMBean bean = new MetricsMBean(objectName, snapshot);
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    try {
      if (server.isRegistered(objectName)) {
        server.unregisterMBean(objectName);
      }
      server.registerMBean(bean, objectName);
    } catch (JMException e) {
      LOG.warn("Cannot register the metrics MBean {}: {}", name, e.getMessage());
    }
    return bean;
  }

  /** The name it is registered under. */
  public ObjectName objectName() {
    return name;
  }

  @Override
  public Object getAttribute(String attribute) throws AttributeNotFoundException {
    for (Metric m : snapshot.get()) {
      if (m.name().equals(attribute)) {
        return m.value();
      }
    }
    throw new AttributeNotFoundException("no metric '" + attribute + "'");
  }

  @Override
  public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
    throw new AttributeNotFoundException("metrics are read-only: " + attribute.getName());
  }

  @Override
  public AttributeList getAttributes(String[] attributes) {
    Map<String, Long> now = new HashMap<>();
    snapshot.get().forEach(m -> now.put(m.name(), m.value()));
    AttributeList list = new AttributeList();
    for (String a : attributes) {
      if (now.containsKey(a)) {
        list.add(new Attribute(a, now.get(a)));
      }
    }
    return list;
  }

  @Override
  public AttributeList setAttributes(AttributeList attributes) {
    return new AttributeList();
  }

  @Override
  public Object invoke(String actionName, Object[] params, String[] signature) {
    throw new UnsupportedOperationException("metrics have no operations");
  }

  @Override
  public MBeanInfo getMBeanInfo() {
    return info;
  }

  @Override
  public void close() {
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      if (server.isRegistered(name)) {
        server.unregisterMBean(name);
      }
    } catch (JMException e) {
      LOG.debug("Metrics MBean {} already gone", name, e);
    }
  }
}
