#!/bin/sh
# The transport contract suite on soft-iWARP's siw0 (check verbs-contract-siw): as verbs-contract,
# with every RDMA listener on 10.77.1.1. About 7 min of VM time on a loaded host, so it runs on
# demand (disni-check --only siw-contract), not in ci.
exec sh /payload/verbs-contract.sh 10.77.1.1 verbs-contract-siw
