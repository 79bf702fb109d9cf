#!/usr/bin/env python3
"""Offline check of deploy/: Kubernetes manifests (kustomize layout), systemd
units and the Slurm script. Renders the kustomizations itself (resources +
JSON6902 patches) and, when kubectl is on PATH, compares with
`kubectl kustomize`. Prints what it checked; exits 1 on the first problem."""
import copy, json, os, re, shutil, subprocess, sys

try:
    import yaml
except ImportError:
    print("SKIPPED: python3-yaml is not installed (scripts/install-deps adds it)")
    sys.exit(0)

DEPLOY = os.path.dirname(os.path.abspath(__file__))
problems = []


def fail(msg):
    problems.append(msg)
    print("PROBLEM:", msg)


def load_kustomization(path):
    with open(os.path.join(path, "kustomization.yaml")) as f:
        k = yaml.safe_load(f)
    docs = []
    for r in k.get("resources", []):
        p = os.path.join(path, r)
        if os.path.isdir(p):
            docs += load_kustomization(p)
        else:
            with open(p) as f:
                docs += [d for d in yaml.safe_load_all(f) if d]
    for d in docs:
        if k.get("namespace") and d["kind"] != "Namespace":
            d["metadata"]["namespace"] = k["namespace"]
        for l in k.get("labels", []):
            d["metadata"].setdefault("labels", {}).update(l["pairs"])
        for img in k.get("images", []):
            for c in containers(d):
                if c["image"] == img["name"]:
                    c["image"] = f'{img["newName"]}:{img["newTag"]}'
    for p in k.get("patches", []):
        t = p["target"]
        hits = [d for d in docs if d["kind"] == t["kind"] and d["metadata"]["name"] == t["name"]]
        if len(hits) != 1:
            fail(f"{path}: patch target {t} matches {len(hits)} objects")
            continue
        for op in yaml.safe_load(p["patch"]):
            apply_op(hits[0], op, path)
    return docs


def apply_op(doc, op, where):
    keys = [k.replace("~1", "/").replace("~0", "~") for k in op["path"].split("/")[1:]]
    node = doc
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node.get(k)
        if node is None:
            fail(f"{where}: patch path {op['path']} does not exist")
            return
    last = keys[-1]
    if op["op"] == "remove":
        if last not in node:
            fail(f"{where}: cannot remove missing {op['path']}")
        node.pop(last, None)
    elif op["op"] in ("add", "replace"):
        if op["op"] == "replace" and last not in node:
            fail(f"{where}: cannot replace missing {op['path']}")
        node[last] = copy.deepcopy(op["value"])


def containers(d):
    return d.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])


def pod_spec(d):
    return d["spec"]["template"]["spec"]


def args_of(c):
    return dict(a[2:].split("=", 1) for a in c.get("args", []) if a.startswith("--") and "=" in a)


def check_render(name, docs, gpu):
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    need = [("Namespace", "argus"), ("Secret", "argus-tokens"),
            ("PersistentVolumeClaim", "argus-store"), ("Deployment", "argus-server"),
            ("Service", "argus-server"), ("Deployment", "argus-verifier"),
            ("Service", "argus-verifier"), ("DaemonSet", "argus-worker")]
    for kind_name in need:
        if kind_name not in by:
            fail(f"{name}: missing {kind_name[0]} {kind_name[1]}")
    if problems:
        return
    for d in docs:
        for f in ("apiVersion", "kind", "metadata"):
            if f not in d:
                fail(f"{name}: an object lacks {f}")
        if d["kind"] != "Namespace" and d["metadata"].get("namespace") != "argus":
            fail(f"{name}: {d['kind']} {d['metadata']['name']} is not in namespace argus")
    secret = by[("Secret", "argus-tokens")]
    keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    # Workloads: selectors match labels; Services select a workload and name its port.
    for (kind, n), d in by.items():
        if kind not in ("Deployment", "DaemonSet"):
            continue
        sel = d["spec"]["selector"]["matchLabels"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in sel.items()):
            fail(f"{name}: {kind} {n} selector {sel} does not match its pod labels {labels}")
        vols = {v["name"]: v for v in pod_spec(d).get("volumes", [])}
        for c in containers(d):
            if c.get("securityContext", {}).get("allowPrivilegeEscalation") is not False:
                fail(f"{name}: {n}/{c['name']} allows privilege escalation")
            for m in c.get("volumeMounts", []):
                if m["name"] not in vols:
                    fail(f"{name}: {n} mounts undeclared volume {m['name']}")
            a = args_of(c)
            for flag in ("token_file", "worker_token_file", "admin_token_file"):
                if flag in a:
                    mount = [m for m in c["volumeMounts"] if a[flag].startswith(m["mountPath"] + "/")]
                    if not mount:
                        fail(f"{name}: {n} --{flag}={a[flag]} is not under a mounted volume")
                        continue
                    v = vols[mount[0]["name"]]
                    key = os.path.basename(a[flag])
                    if "secret" not in v or v["secret"]["secretName"] != "argus-tokens":
                        fail(f"{name}: {n} --{flag} is not read from the argus-tokens Secret")
                    elif key not in keys:
                        fail(f"{name}: {n} --{flag} names key {key}, not in the Secret")
                    elif v["secret"].get("defaultMode", 0o644) & 0o077:
                        fail(f"{name}: {n} token volume is readable by group/others")
        for v in vols.values():
            pvc = v.get("persistentVolumeClaim")
            if pvc and ("PersistentVolumeClaim", pvc["claimName"]) not in by:
                fail(f"{name}: {n} claims missing PVC {pvc['claimName']}")
    for svc in ("argus-server", "argus-verifier"):
        s, dep = by[("Service", svc)], by[("Deployment", svc)]
        labels = dep["spec"]["template"]["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in s["spec"]["selector"].items()):
            fail(f"{name}: Service {svc} selects no pod of Deployment {svc}")
        ports = {p["name"] for c in containers(dep) for p in c.get("ports", [])}
        for p in s["spec"]["ports"]:
            if p["targetPort"] not in ports:
                fail(f"{name}: Service {svc} targets port {p['targetPort']}, not declared")
    server = by[("Deployment", "argus-server")]
    sa = args_of(containers(server)[0])
    if server["spec"]["replicas"] != 1 or server["spec"]["strategy"]["type"] != "Recreate":
        fail(f"{name}: argus-server must be 1 replica with Recreate (one SQLite writer)")
    store_mount = [m["mountPath"] for m in containers(server)[0]["volumeMounts"] if m["name"] == "store"]
    if not store_mount or not sa.get("db", "").startswith(store_mount[0] + "/"):
        fail(f"{name}: argus-server --db={sa.get('db')} is not on the PVC mount")
    port = sa["listen"].rsplit(":", 1)[1]
    worker = by[("DaemonSet", "argus-worker")]
    wc = containers(worker)[0]
    wa = args_of(wc)
    host, wport = wa["server"].rsplit(":", 1)
    if ("Service", host) not in by or wport != port:
        fail(f"{name}: worker --server={wa['server']} is not the server Service port {port}")
    limits = wc.get("resources", {}).get("limits", {})
    gpus = {k: v for k, v in limits.items() if k.endswith("/gpu")}
    if gpus != {gpu: 1}:
        fail(f"{name}: worker GPU limits {gpus}, expected {{{gpu}: 1}}")
    if wa.get("device") != "0":
        fail(f"{name}: worker must use --device=0 (the one GPU the plugin shows)")
    print(f"  {name}: {len(docs)} objects; worker asks {gpus}; server --db on PVC; "
          f"tokens from Secret keys {sorted(keys)}")


def check_kubernetes():
    variants = [("base", os.path.join(DEPLOY, "k8s/base"), "nvidia.com/gpu"),
                ("overlays/amd", os.path.join(DEPLOY, "k8s/overlays/amd"), "amd.com/gpu")]
    kubectl = shutil.which("kubectl")
    for name, path, gpu in variants:
        docs = load_kustomization(path)
        check_render(name, docs, gpu)
        if kubectl:
            out = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True)
            if out.returncode != 0:
                fail(f"kubectl kustomize {name}: {out.stderr.strip()}")
                continue
            theirs = [d for d in yaml.safe_load_all(out.stdout) if d]
            key = lambda d: (d["kind"], d["metadata"]["name"])
            a = {key(d): d for d in docs}
            b = {key(d): d for d in theirs}
            if set(a) != set(b):
                fail(f"{name}: kubectl kustomize renders {sorted(b)} vs ours {sorted(a)}")
            check_render(name + " (kubectl kustomize)", theirs, gpu)
    if not kubectl:
        print("  kubectl not on PATH: checked our own kustomize rendering only")


def check_systemd():
    units = ["argus-server.service", "argus-verifier.service", "argus-worker@.service"]
    for u in units:
        with open(os.path.join(DEPLOY, "systemd", u)) as f:
            text = f.read()
        for section in ("[Unit]", "[Service]", "[Install]"):
            if section not in text:
                fail(f"{u}: no {section}")
        if "--token_file" not in text and "--worker_token_file" not in text:
            fail(f"{u}: starts without a token")
    with open(os.path.join(DEPLOY, "systemd", "argus-worker@.service")) as f:
        if "--device %i" not in f.read():
            fail("argus-worker@.service: does not pass --device %i")
    print(f"  systemd: {len(units)} units have their sections and tokens")


def check_slurm():
    path = os.path.join(DEPLOY, "slurm", "argus-workers.sbatch")
    with open(path) as f:
        text = f.read()
    sb = re.findall(r"^#SBATCH (\S+)", text, re.M)
    for need in ("--gres=gpu:1", "--array"):
        if not any(s.startswith(need) for s in sb):
            fail(f"argus-workers.sbatch: no #SBATCH {need}")
    r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"argus-workers.sbatch: bash -n: {r.stderr}")
    print(f"  slurm: sbatch directives {sb}")


if __name__ == "__main__":
    print("checking deploy/ offline")
    check_kubernetes()
    check_systemd()
    check_slurm()
    if problems:
        print(f"{len(problems)} problems")
        sys.exit(1)
    print("deploy/: all checks passed")
