"""The loader: finding spec files, reading them safely, the strict YAML loader, Python spec modules
in a supervised child process, templates and values files, and turning documents into located specs."""
