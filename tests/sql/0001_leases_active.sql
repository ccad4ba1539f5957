-- leases_active lists only active leases, with host, rack and ISO times.
SELECT lease_id, gpu, host, local_index, rack, app, app_name, owner, job, round, start, expiry FROM leases_active ORDER BY gpu;
