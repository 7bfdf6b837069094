"""The real daemon with a runtime (nri_runtime.Session) and a fake API
server (fake_apiserver.py) it reaches through a kubeconfig, torn down
together. The server knows the daemon's Node; every API wait is short
(one retry, a 100 ms backoff) so that tests of a failing server are quick.

    with ApiEnv(config, args=["--nrt-debounce", "100"]) as env:
        env.start()
        env.api.recorded("PUT"), env.admin("grants"), env.grants()
        env.stop()

draenv.py adds the kubelet stand-in for the DRA tests.
"""

import uuid

import tap
from fake_apiserver import FakeApiServer
from nri_runtime import Session, parse_cpuset

NODE = "testnode"               # daemon.py passes --node-name
API_TIMEOUT_MS = 1000
API_RETRIES = 1
API_BACKOFF_MS = 100
API_ARGS = ["--api-timeout", str(API_TIMEOUT_MS),
            "--api-retries", str(API_RETRIES),
            "--api-backoff", str(API_BACKOFF_MS)]


class ApiEnv:
    """config and args go to the daemon (args after the API options);
    sysfs_root or else the recorded machine; api=False: a server that was
    there and is gone, its port refusing; daemon_class: a daemon.Daemon
    of the test's own."""

    def __init__(self, config=None, args=(), sysfs_root=None,
                 machine="server", api=True, node_uid=None,
                 daemon_class=None):
        self.folder = tap.tmpdir()
        self.api = FakeApiServer().start()
        self.api.set_node(NODE, node_uid or str(uuid.uuid4()))
        kc = self.api.kubeconfig(self.folder)
        if not api:
            self.api.stop()
        self.config = config
        self.args = ["--kubeconfig", kc] + API_ARGS + list(args)
        self.sysfs_root = sysfs_root
        self.machine = machine
        self.daemon_class = daemon_class
        self.s = self.session()

    def session(self):
        """A new daemon and runtime on this folder."""
        return Session(self.config, machine=self.machine,
                       sysfs_root=self.sysfs_root, folder=self.folder,
                       args=self.args, daemon_class=self.daemon_class)

    @property
    def rt(self):
        return self.s.rt

    @property
    def d(self):
        return self.s.d

    def start(self, serve=True):
        self.s.start(serve=serve)
        if serve:
            self.s.wait_status(lambda st: st["nri"]["synchronized"])
        return self

    def status(self):
        return self.s.status()

    def admin(self, command, *args):
        """The result of an admin command, which must succeed."""
        r = self.d.admin(command, *args)
        assert r["ok"], r
        return r["result"]

    def grants(self):
        """{container id: CPUs} of the containers' grants."""
        return {g["id"]: parse_cpuset(g["cpus"])
                for g in self.admin("grants") if "id" in g}

    def held(self):
        """{uid: CPUs} of the claims the daemon holds."""
        return {g["claim"]: parse_cpuset(g["cpus"])
                for g in self.admin("claims")}

    def close_clients(self):
        """Closes what talks to the daemon besides the runtime."""

    def stop(self):
        """Stops everything; the daemon must exit cleanly."""
        self.close_clients()
        try:
            self.s.stop()
        finally:
            self.api.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close_clients()
        self.s.__exit__(*exc)
        self.api.stop()
        return False
