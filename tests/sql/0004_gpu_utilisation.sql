-- gpu_utilisation: per host, allocated = GPUs under an active lease.
SELECT host, rack, state, gpus, allocated, utilisation FROM gpu_utilisation;
