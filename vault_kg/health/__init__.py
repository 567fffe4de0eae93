"""Services: `kg doctor`, one report of whether kg works here, a verdict per line and, for each line that fails, what to run."""
