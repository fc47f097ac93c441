from trainspec.cli.main import console

console()
