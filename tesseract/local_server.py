"""Serve this Tesseract on a free loopback port for as long as a ``with`` block runs.

    with served() as url:          # "http://127.0.0.1:PORT", answering /health
        ...

The tests and the benchmark use it: `tesseract-runtime serve` from the running interpreter's
environment, bound to 127.0.0.1, its logs and run folders in a temporary directory, stopped
(SIGTERM, then SIGKILL) when the block ends.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

API_PATH = Path(__file__).resolve().parent / "tesseract_api.py"


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def served(startup_timeout: float = 120.0, stop_timeout: float = 10.0):
    runtime = Path(sys.executable).parent / "tesseract-runtime"
    with tempfile.TemporaryDirectory(prefix="saltation-tesseract-") as workdir:
        port = _free_loopback_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "TESSERACT_API_PATH": str(API_PATH), "TESSERACT_OUTPUT_PATH": workdir}
        log_path = Path(workdir) / "serve.log"
        with open(log_path, "wb") as log:
            server = subprocess.Popen(
                [str(runtime), "serve", "--host", "127.0.0.1", "--port", str(port)],
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        try:
            deadline = time.monotonic() + startup_timeout
            while not _healthy(url):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"tesseract-runtime serve did not come up on {url} "
                        f"(exit status {server.poll()}):\n{log_path.read_text(errors='replace')[-4000:]}"
                    )
                time.sleep(0.2)
            yield url
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=stop_timeout)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()

