#!/usr/bin/env python3
"""The cluster recipe, end to end: 3 `darkroom serve` instances behind nginx over an S3 bucket on loopback.

    python3 scripts/cluster-test.py [--darkroom .build/release/darkroom] [--photos ../shared/photos]

Starts moto (S3 API) and uploads the sample photos (jpeg, png, webp folders) to bucket `photos`; starts
`scripts/cluster.sh 3` over it (every instance with the same signing --key); then checks:
  0. safety through nginx: unsigned and tampered URLs are 403 from the instances, /metrics and /health are not
     forwarded, no answer carries the S3 credentials;
  1. first pass, one thumbnail per source through nginx: all 200, and the instances' `rendered` counters add up to
     the number of sources (each source rendered on exactly one instance);
  2. second pass, the same requests: >= 95 % answered from a cache (nginx `X-Cache: HIT`, or the instance's memory
     or disk cache);
  3. new thumbnails requested by 4 clients while one instance is killed with SIGKILL: zero failed requests;
  4. the killed instance restarted on its cache folder: its disk cache answers the thumbnails it rendered before,
     and nginx sends it work again;
  5. an instance hung with SIGSTOP (connections still accepted) is marked down by cluster.sh's /health check within
     seconds: every request is answered by the others, none waits on it; resumed, it is put back and gets work.
Exit 0 when every check passes, 1 when one fails, 2 when the test could not run.
"""
import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from loopback import free_port, get, wait_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = int(os.environ.get("CLUSTER_TEST_BASE_PORT", "28080"))
KEY = "cluster-test-signing-key"


def wait_until(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def rendered(port):
    status, _, body = get(f"http://127.0.0.1:{port}/metrics", accept="text/plain")
    m = re.search(r'darkroom_server_thumbnails_total\{outcome="rendered"\} (\d+)', body.decode())
    return int(m.group(1)) if m else 0


def instance_pid(port):
    out = subprocess.run(["pgrep", "-f", f"darkroom serve --port {port} "], capture_output=True, text=True).stdout
    return int(out.split()[0]) if out.split() else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(os.path.dirname(ROOT), "shared", "photos"))
    args = ap.parse_args()
    failures = []

    def check(ok, what, detail=""):
        print(f"  {'PASS' if ok else 'FAIL'}  {what}" + (f" — {detail}" if detail else ""), flush=True)
        if not ok:
            failures.append(what)

    import boto3
    work = tempfile.mkdtemp(prefix="darkroom-cluster-test-")
    moto_port = free_port()
    moto = subprocess.Popen(["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", str(moto_port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster = None
    restarted = None
    try:
        if not wait_port(moto_port):
            print("cluster-test: moto did not start (scripts/install-pydeps.sh)")
            return 2
        endpoint = f"http://127.0.0.1:{moto_port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
        s3.create_bucket(Bucket="photos")
        keys = []
        for folder in ("jpeg", "png", "webp"):
            for path in sorted(glob.glob(os.path.join(args.photos, folder, "*"))):
                key = f"{folder}/{os.path.basename(path)}"
                s3.upload_file(path, "photos", key)
                keys.append(key)
        if len(keys) < 10:
            print(f"cluster-test: expected the sample photos' jpeg, png and webp folders in {args.photos}; "
                  f"found {len(keys)} files")
            return 2
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   CLUSTER_BASE_PORT=str(BASE), CLUSTER_DIR=work, DARKROOM=args.darkroom)
        serve_args = ["--allow-bucket", "photos", "--s3-endpoint", endpoint, "--key", KEY]
        cluster = subprocess.Popen(["bash", os.path.join(ROOT, "scripts", "cluster.sh"), "3", "--"] + serve_args,
                                   env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
        line = cluster.stdout.readline()
        if "behind nginx" not in line or not wait_port(BASE):
            print("cluster-test: the cluster did not start: " + line)
            return 2
        print(f"cluster-test: {line.strip()}; {len(keys)} sources in s3://photos")
        ports = [BASE + i for i in (1, 2, 3)]

        def signed(path_and_query):
            return subprocess.run([args.darkroom, "sign", "--key", KEY, path_and_query], capture_output=True,
                                  text=True, check=True).stdout.strip()

        def thumb(key, width, port=BASE):
            src = urllib.parse.quote(f"s3://photos/{key}", safe="")
            return get(f"http://127.0.0.1:{port}" + signed(f"/v1/thumb?src={src}&w={width}&h={width}&fit=cover"))

        # 0. Safety through the cluster: unsigned and tampered URLs are refused by the instances, /metrics and
        #    /health are not forwarded, and no answer carries the S3 credentials
        src = urllib.parse.quote(f"s3://photos/{keys[0]}", safe="")
        unsigned = get(f"http://127.0.0.1:{BASE}/v1/thumb?src={src}&w=64")
        tampered = get(f"http://127.0.0.1:{BASE}" + signed(f"/v1/thumb?src={src}&w=64").replace("w=64", "w=65"))
        hidden = [get(f"http://127.0.0.1:{BASE}{p}", accept="*/*")[0] for p in ("/metrics", "/health")]
        check(unsigned[0] == 403 and tampered[0] == 403 and hidden == [404, 404],
              "signing holds through nginx; /metrics and /health are not forwarded",
              f"unsigned {unsigned[0]}, tampered {tampered[0]}, metrics/health {hidden}")
        leaked = any(b"testing" in body for _, _, body in (unsigned, tampered))
        check(not leaked, "no answer carries the S3 credentials")

        # 1. First pass: each source rendered on exactly one instance
        first = [thumb(k, 256) for k in keys]
        check(all(s == 200 for s, _, _ in first), "first pass: every thumbnail 200",
              f"{[s for s, _, _ in first if s != 200]}")
        counts = [rendered(p) for p in ports]
        check(sum(counts) == len(keys), "first pass: each source rendered on exactly one instance",
              f"renders per instance {counts}, {len(keys)} sources")
        # 2. Second pass: cache hits
        second = [thumb(k, 256) for k in keys]
        hits = sum(1 for s, h, _ in second if s == 200 and (h.get("X-Cache") == "HIT"
                   or h.get("X-Darkroom-Cache") in ("memory", "disk")))
        check(hits >= 0.95 * len(keys), "second pass: >= 95 % cache hits", f"{hits} of {len(keys)}")
        # 3. SIGKILL one instance while 4 clients request new thumbnails
        victim = ports[counts.index(max(counts))]
        before = {p: rendered(p) for p in ports}
        statuses = []
        lock = threading.Lock()

        def client(offset):
            for i, key in enumerate(keys):
                status, _, _ = thumb(key, 300 + offset * 50 + i % 3)
                with lock:
                    statuses.append(status)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        pid = instance_pid(victim)
        with lock:
            done_at_kill = len(statuses)
        os.kill(pid, signal.SIGKILL)
        for t in threads:
            t.join()
        failed = [s for s in statuses if s != 200]
        check(pid is not None and not failed, f"instance :{victim} killed mid-run: zero failed client requests",
              f"{len(statuses)} requests ({done_at_kill} done at the kill), failures {failed[:10]}")
        # 4. Restart it on its cache folder: its disk cache answers what it rendered before
        index = ports.index(victim) + 1
        restarted = subprocess.Popen([args.darkroom, "serve", "--port", str(victim), "--cache-dir",
                                      os.path.join(work, f"instance-{index}"), "--max-connections-per-client", "0"]
                                     + serve_args, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(victim)
        direct = []
        for key in keys:
            direct.append(thumb(key, 256, port=victim))
        from_disk = sum(1 for s, h, _ in direct if s == 200 and h.get("X-Darkroom-Cache") == "disk")
        check(from_disk >= before[victim] > 0, "restarted instance: its disk cache is intact",
              f"{from_disk} thumbnails from disk, it had rendered {before[victim]} in the first pass")
        # nginx takes it back once the health check sees it and its fail_timeout (5 s) has passed
        time.sleep(6)
        start = rendered(victim)
        again = [thumb(k, 600) for k in keys]
        check(all(s == 200 for s, _, _ in again) and rendered(victim) > start,
              "restarted instance rejoins: nginx sends it work again",
              f"it rendered {rendered(victim) - start} of {len(keys)} new thumbnails")

        # 5. A hung instance (SIGSTOP): its port still accepts connections, so nginx on its own would wait out
        #    proxy_read_timeout (60 s) per request; the health check marks it down and requests go elsewhere at once
        hung = ports[(ports.index(victim) + 1) % len(ports)]
        hung_pid = instance_pid(hung)
        conf = os.path.join(work, "nginx.conf")
        marked = f"server 127.0.0.1:{hung} max_fails=1 fail_timeout=5s down;"
        os.kill(hung_pid, signal.SIGSTOP)
        try:
            t0 = time.time()
            taken_out = wait_until(lambda: marked in open(conf).read(), 15)
            detected = time.time() - t0
            time.sleep(1)  # nginx's reload starts new workers
            timed = []
            for key in keys:
                t = time.time()
                status, _, _ = thumb(key, 700)
                timed.append((status, time.time() - t))
            slowest = max(t for _, t in timed)
            check(taken_out and all(s == 200 for s, _ in timed) and slowest < 10,
                  f"hung instance :{hung} taken out by /health: every request answered, none waits on it",
                  f"marked down after {detected:.1f} s; {len(timed)} requests, "
                  f"failures {[s for s, _ in timed if s != 200][:10]}, slowest {slowest:.2f} s")
        finally:
            os.kill(hung_pid, signal.SIGCONT)
        back = wait_until(lambda: marked not in open(conf).read(), 15)
        time.sleep(1)
        start = rendered(hung)
        again = [thumb(k, 720) for k in keys]
        check(back and all(s == 200 for s, _, _ in again) and rendered(hung) > start,
              "the resumed instance passes /health and is put back",
              f"it rendered {rendered(hung) - start} of {len(keys)} new thumbnails")
    finally:
        if restarted:
            restarted.terminate()
            restarted.wait()
        if cluster:
            os.killpg(cluster.pid, signal.SIGTERM)
            cluster.wait()
        moto.kill()
        moto.wait()
    if failures:
        print(f"cluster-test: FAILED {len(failures)} check(s)")
        return 1
    print("cluster-test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
