# shellcheck shell=bash
# What the project's scripts share: source it, then use the variables and functions below.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/sluice.sh"     (adjust the path to bin/lib)
#
#   SLUICE_ROOT          the repository root (the scripts cd there themselves if they need to)
#   SLUICE_JAVA          $JAVA_HOME/bin/java when JAVA_HOME is set, else java from PATH
#   SLUICE_SPARK_HOME    the Spark home spark-shuffle's build assembles from the Maven jars
#   sluice_build ARGS    mvn -B -q -ntp ARGS offline, then online where the offline build lacked
#                        artifacts (that attempt prints nothing then); nothing
#                        when SLUICE_BUILT is set (a caller that built already, such as perf/ci, sets it)
#   sluice_jar MODULE    the main jar a module's build wrote (not its tests, sources or unshaded jar)
#   sluice_classpath MODULE
#                        the module's jar and its runtime class path (target/runtime-classpath.txt)
#   sluice_classpath_jar MODULE NAME
#                        the jar NAME-<version>.jar on that class path, for example picocli
#   sluice_slf4j_jar     SLF4J's API jar: $SLUICE_SLF4J_JAR when set, else from $SPARK_HOME/jars,
#                        $HADOOP_HOME, the build's Spark home or ~/.m2, in that order; fails when
#                        there is none
#   sluice_spark_opens   the JVM flags Spark's launcher adds on JDK 17 (spark.module.opens in the
#                        parent pom, the one place they are kept), for JVMs that are Spark drivers
#   sluice_has_option OPTION ARGS...
#                        true when OPTION is one of ARGS
#   sluice_python_env    makes python/.venv (see below) when missing, installs the sluice package
#                        into it; prints its python. From /usr/bin/python3 with
#                        --system-site-packages (Debian's python3-torch); as root, apt-get installs
#                        python3-venv and python3-torch when missing. Where the system NumPy is 1.x,
#                        pip is held to numpy<2 and pyarrow<26 (pyarrow 26 needs NumPy 2).
#
# Sourcing changes no shell option and runs nothing but a few assignments.

SLUICE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SLUICE_JAVA=java
if [[ -n ${JAVA_HOME:-} ]]; then
  SLUICE_JAVA=$JAVA_HOME/bin/java
fi
SLUICE_SPARK_HOME=$SLUICE_ROOT/spark-shuffle/target/spark-home

sluice_build() {
  if [[ -n ${SLUICE_BUILT:-} ]]; then
    return 0
  fi
  # The offline attempt is quiet when it fails for want of artifacts the local repository lacks
  # (a new machine): the online build then fetches them. Any other failure is shown as it is.
  local offline_log status
  offline_log=$(mktemp)
  (cd "$SLUICE_ROOT" && mvn -B -q -ntp -o "$@") >"$offline_log" 2>&1
  status=$?
  if [[ $status -eq 0 ]] || ! grep -q 'offline mode' "$offline_log"; then
    cat "$offline_log"
    rm -f "$offline_log"
    return $status
  fi
  rm -f "$offline_log"
  echo "fetching the build's dependencies (the local Maven repository lacks some)" >&2
  (cd "$SLUICE_ROOT" && mvn -B -q -ntp "$@")
}

sluice_jar() {
  local module=$1 jar
  jar=$(ls "$SLUICE_ROOT/$module"/target/*.jar 2>/dev/null \
    | grep -v -e '-tests\.jar$' -e '-sources\.jar$' -e '/original-' | head -n 1 || true)
  if [[ -z $jar ]]; then
    echo "no jar in $module/target: build $module first (sluice_build -pl $module -am package -DskipTests)" >&2
    return 1
  fi
  echo "$jar"
}

sluice_classpath() {
  local module=$1 jar file=$SLUICE_ROOT/$1/target/runtime-classpath.txt
  jar=$(sluice_jar "$module") || return 1
  if [[ ! -s $file ]]; then
    echo "missing $file: the $module build did not write its class path" >&2
    return 1
  fi
  echo "$jar:$(cat "$file")"
}

sluice_classpath_jar() {
  local module=$1 name=$2 file=$SLUICE_ROOT/$1/target/runtime-classpath.txt jar
  jar=$(tr ':' '\n' <"$file" | grep "/$name-[0-9][^/]*\.jar$" | head -n 1 || true)
  if [[ -z $jar ]]; then
    echo "no $name jar on $module's class path ($file)" >&2
    return 1
  fi
  echo "$jar"
}

sluice_slf4j_jar() {
  local dir jar
  if [[ -n ${SLUICE_SLF4J_JAR:-} ]]; then
    echo "$SLUICE_SLF4J_JAR"
    return 0
  fi
  for dir in "${SPARK_HOME:-}/jars" "${HADOOP_HOME:-}/share/hadoop/common/lib" "$SLUICE_SPARK_HOME/jars" \
      "$HOME/.m2/repository/org/slf4j/slf4j-api"; do
    if [[ -d $dir ]]; then
      jar=$(find "$dir" -name 'slf4j-api-*.jar' 2>/dev/null | sort | tail -n 1 || true)
      if [[ -n $jar ]]; then
        echo "$jar"
        return 0
      fi
    fi
  done
  return 1
}

sluice_spark_opens() {
  local opens
  opens=$(sed -n 's#.*<spark.module.opens>\(.*\)</spark.module.opens>.*#\1#p' "$SLUICE_ROOT/pom.xml")
  if [[ -z $opens ]]; then
    echo "spark.module.opens is missing from $SLUICE_ROOT/pom.xml" >&2
    return 1
  fi
  echo "$opens"
}

sluice_has_option() {
  local option=$1 a
  shift
  for a in "$@"; do
    [[ $a == "$option" ]] && return 0
  done
  return 1
}

sluice_python_env() {
  local python=/usr/bin/python3 venv=$SLUICE_ROOT/python/.venv missing=()
  if [[ ! -x $python ]]; then
    echo "$python is missing; the Python side needs Debian's python3" >&2
    return 1
  fi
  "$python" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  "$python" -c 'import torch' 2>/dev/null || missing+=(python3-torch)
  if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ $(id -u) -eq 0 ]]; then
      echo "installing ${missing[*]} (apt-get)" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}"; } >/dev/null || echo "apt-get could not install ${missing[*]}" >&2
    else
      echo "${missing[*]} missing and not root: not installed (what needs torch skips or fails)" >&2
    fi
  fi
  if [[ ! -x $venv/bin/python ]]; then
    "$python" -m venv --system-site-packages "$venv" >&2 || return 1
  fi
  local constraints=$venv/constraints.txt
  : >"$constraints"
  if [[ $("$venv/bin/python" -c 'import numpy; print(numpy.__version__.split(".")[0])' 2>/dev/null) == 1 ]]; then
    printf 'numpy<2\npyarrow<26\n' >"$constraints"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" -e "$SLUICE_ROOT/python[test]" \
    >&2 || return 1
  echo "$venv/bin/python"
}
