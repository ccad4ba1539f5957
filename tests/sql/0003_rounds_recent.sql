-- rounds_recent: newest first, duration in milliseconds and an outcome word.
SELECT round, started, duration_ms, trigger, policy, free_gpus, apps, granted, idle, outcome FROM rounds_recent;
