package io.sluice.transport.verbs.nativelib;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/** Reflection helpers for reaching DiSNI's internals (Nat* serializers) in tests. */
final class Reflect {

  private Reflect() {}

  static Class<?> type(String name, ClassLoader loader) {
    try {
      return Class.forName(name, false, loader);
    } catch (ClassNotFoundException e) {
      throw new AssertionError(e);
    }
  }

  static Class<?> type(String name) {
    return type(name, Reflect.class.getClassLoader());
  }

  static int staticInt(Class<?> type, String field) {
    try {
      Field f = type.getDeclaredField(field);
      f.setAccessible(true);
      return f.getInt(null);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  static Object field(Object target, String name) {
    try {
      Field f = target.getClass().getDeclaredField(name);
      f.setAccessible(true);
      return f.get(target);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  /** Invokes a declared method; rethrows what the method threw, unwrapped. */
  static Object call(Object target, Class<?> owner, String name, Class<?>[] types, Object... args)
      throws Throwable {
    Method m = owner.getDeclaredMethod(name, types);
    m.setAccessible(true);
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  static Object construct(Class<?> type, Class<?>[] types, Object... args) throws Throwable {
    Constructor<?> c = type.getDeclaredConstructor(types);
    c.setAccessible(true);
    try {
      return c.newInstance(args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
