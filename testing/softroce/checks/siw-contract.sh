#!/bin/sh
# The transport contract suite on soft-iWARP's siw0 (check verbs-contract-siw): as verbs-contract,
# with every RDMA listener on 10.77.1.1, the read-stress cases included. Those caught siw replying
# to short READs across a page boundary with wrong bytes, which the provider now avoids on iWARP
# (transport-verbs/README.md, "READ integrity and completions").
exec sh /payload/verbs-contract.sh 10.77.1.1 verbs-contract-siw
