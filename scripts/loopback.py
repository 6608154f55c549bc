"""What the scripts that drive servers on loopback share: free ports, waiting for a listener, and GETs that
answer (status, headers, body) whatever happens (status 0 when nothing answered)."""
import socket
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=30):
    """Whether something accepts connections on 127.0.0.1:port within `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def get(url, accept="image/webp,*/*", timeout=60):
    """GET url: (status, headers, body); HTTP errors give their status, a refused, reset or torn answer gives 0."""
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except (OSError, ValueError) as e:
        return 0, {}, str(e).encode()
