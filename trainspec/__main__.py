import sys

from trainspec.cli.main import main

sys.exit(main())
