#!/bin/sh
# Runs transport-verbs' JUnit tests and the lab's device tests (testing/lab) inside the lab guest,
# where the tests that need an RDMA device (ReadCheckOnDeviceTest, VerbsIsolationOnDeviceTest,
# the device branches of DisniRuntimeTest and DisniTaskTest) run instead of being skipped. The
# transport contract runs separately (verbs-contract.sh).
# Memory window support of the device (ibv_devinfo): what per-peer isolation could build on.
echo "SLUICE-LAB: MW-SUPPORT $(ibv_devinfo -v -d rxe0 | grep -E 'max_mw|MEM_WINDOW' | tr -s ' \t' ' ' | paste -sd ';' -)"
. "$(dirname "$0")/junit-check.sh"
junit_check verbs-unit-tests 10.77.0.1 --select-package io.sluice.transport.verbs --exclude-classname '.*ContractTest'
