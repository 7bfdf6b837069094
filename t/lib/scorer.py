"""What the tests expect of the pool scorer: its rules, in the order it
compares two pools (the Go policy's compareScores, with the memory rules
of libmem's offers), as topoawarectl explain names them."""

RULES = ["capacity", "affinity", "memory offer", "memory types offered",
         "memory burstability", "CPU burstability", "burstable level",
         "burstable level, pool id", "tighter memory offer",
         "memory types held", "CPU priority", "depth",
         "reserved capacity per container", "isolated capacity",
         "isolated capacity, pool id", "normal-priority capacity",
         "sliceable capacity", "sliceable capacity, pool id",
         "colocated containers", "shared capacity", "pool id"]
