"""The worker process: settings, arq WorkerSettings, pools, CLI, local dev services."""
