#!/bin/sh
# Hadoop RPC over verbs inside the lab guest: HadoopVerbsCheck (testing/lab) starts a Hadoop RPC
# server and client with SluiceRpcEngine on the verbs provider at rxe0's 10.77.0.1 (an echo of
# hadoop-common's GenericRefreshProtocol) and checks that calls of 16 B to 1 MiB come back equal,
# the bodies above 64 KiB READ over verbs both ways and the small ones not. hadoop-rpc's class
# path (hadoop-common and what it needs) comes in /payload/hadoop.
cp="/payload/lib/*:/payload/hadoop/*"
# Some of Hadoop asks for the local host's address by name.
grep -qs "$(hostname)" /etc/hosts || echo "10.77.0.1 $(hostname)" >> /etc/hosts
. "$(dirname "$0")/java-check.sh"
java_check hadoop-verbs HADOOP-VERBS /tmp/hadoop.log -cp "$cp" io.sluice.hadoop.rpc.HadoopVerbsCheck 10.77.0.1
