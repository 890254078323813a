#!/bin/sh
# The transport contract suite on soft-iWARP's siw0 (check verbs-contract-siw): as verbs-contract,
# with every RDMA listener on 10.77.1.1, less the cases tagged read-stress. Those have caught siw
# completing a READ with wrong bytes (transport-verbs/README.md, "READ integrity and
# completions"); they run on rxe0 in every boot and on siw0 on demand (check siw-stress).
exec sh /payload/verbs-contract.sh 10.77.1.1 verbs-contract-siw --exclude-tag read-stress
