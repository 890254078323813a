#!/bin/sh
# The verbs provider's isolation on iWARP: soft-iWARP's siw0 at 10.77.1.1, in the same guest as
# rxe0. First what the device reports (SLUICE-LAB: SIW-DEVICE: transport, READ scatter/gather
# limit, memory windows), then the per-peer isolation and life-cycle checks
# (VerbsIsolationOnDeviceTest, check verbs-isolation-siw): a peer READing with another peer's
# rkey, after a withdrawn grant or with guessed rkeys reads nothing.
echo "SLUICE-LAB: SIW-DEVICE $(ibv_devinfo -v -d siw0 | grep -E 'transport|max_sge_rd|max_mw|max_qp_rd_atom|link_layer' | tr -s ' \t' ' ' | paste -sd ';' -)"
. "$(dirname "$0")/junit-check.sh"
junit_check verbs-isolation-siw 10.77.1.1 --select-class io.sluice.transport.verbs.nativelib.VerbsIsolationOnDeviceTest
