"""Python spec modules: whether they may run, and running one in a supervised child process."""
