"""Stand-in for the pip bootstrap script ansible-test downloads into its empty virtualenvs.

ansible-test creates each sanity virtualenv without pip and fetches a get-pip script from a host
these machines cannot reach. This script does the same job from what is here: pip from the
standard library's ensurepip, then the exact packages ansible-test asked for (such as pip==24.2).

ansible-test runs pip with PIP_CONFIG_FILE=/dev/null and a scrubbed environment, so pip would
forget the CA bundle this machine's pip is configured with (PyPI is reached through an
intercepting proxy here). tools/sanity.sh writes that bundle's path below when it installs this
script; a .pth file then hands it to every pip run in the virtualenv as PIP_CERT.
"""

from __future__ import annotations

import ensurepip
import os
import subprocess
import sys
import sysconfig

CA_BUNDLE = "@CA_BUNDLE@"
# ansible-test passes get-pip's own flags; plain pip does not know them.
GET_PIP_ONLY_FLAGS = {"--no-setuptools", "--no-wheel"}

if CA_BUNDLE:
    pth = os.path.join(sysconfig.get_paths()["purelib"], "sparkinfer_pip_cert.pth")
    with open(pth, "w", encoding="utf-8") as handle:
        handle.write(f"import os; os.environ.setdefault('PIP_CERT', {CA_BUNDLE!r})\n")
    os.environ.setdefault("PIP_CERT", CA_BUNDLE)

ensurepip.bootstrap(upgrade=False)
packages = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_FLAGS]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", *packages]))
