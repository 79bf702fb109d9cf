import sys

from argus_client.cli import main

sys.exit(main())
