-- rounds_recent: newest first, duration in milliseconds and an outcome word.
INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) VALUES
  (1, 'n1', 'r1', 'up', 0, 2, 1767225600, 1767225600), (2, 'n2', 'r1', 'up', 2, 2, 1767225600, 1767225600),
  (3, 'n3', 'r2', 'down', 4, 2, 1767225600, 1767225600);
INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0,1,0,0),(1,1,1,0),(2,2,0,1),(3,2,1,1),(4,3,0,2),(5,3,1,2);
INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, rho, submitted_at) VALUES
  (1, 'resnet', 'alice', 'RUNNING', '', 2, 2, 1.25, 1767225600), (2, 'bert', 'bob', 'PENDING', '', 4, 1, 2.5, 1767225660),
  (3, 'gan', 'carol', 'COMPLETED', '', 1, 1, NULL, 1767225000);
INSERT INTO jobs(app_id, job, state, command, placement, state_since) VALUES
  (1, 0, 'RUNNING', '[]', '[0,1]', 0), (1, 1, 'PENDING', '[]', '[]', 0), (2, 0, 'PENDING', '[]', '[]', 0), (3, 0, 'COMPLETED', '[]', '[2]', 0);
INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) VALUES
  (1, 1767225600, 1767225600.25, 'host joined', 'themis', 6, 1, 2, 4, '{}'),
  (2, 1767225660, 1767225660.003, 'app arrived', 'themis', 4, 2, 0, 4, '{}'),
  (3, 1767225700, 1767225700.5, 'lease expiry', 'themis', 2, 2, 2, 0, '{}');
INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES
  (0, 1, 0, 1, 1767225600, 1767226200, 'active'), (1, 1, 0, 1, 1767225600, 1767226200, 'active'),
  (2, 3, 0, 1, 1767225000, 1767225600, 'released');
SELECT round, started, duration_ms, trigger, policy, free_gpus, apps, granted, idle, outcome FROM rounds_recent;
