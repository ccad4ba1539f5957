-- apps_rho: every app with its current rho, GPUs held and job counts.
SELECT app, name, owner, state, rho, gpus_held, jobs, jobs_running, jobs_pending, jobs_done, submitted FROM apps_rho ORDER BY app;
