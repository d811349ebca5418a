package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/app/sharding"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/testenv"
)

// The sharded replicas run on a control plane of their own that writes an
// audit log of every write to Secrets and ExternalSecrets (who wrote what
// where, and when) and of every list and watch of the kinds a replica
// caches only where it works. Each replica is its own user.
const shardAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - group: ""
    resources: [secrets]
  - group: external-secrets.io
    resources: [externalsecrets, externalsecrets/status]
- level: Metadata
  verbs: [list, watch]
  resources:
  - group: ""
    resources: [secrets]
  - group: external-secrets.io
    resources: [externalsecrets]
  - group: generator.external-secrets.io
    resources: [generatorstates]
- level: None
`

const (
	shardSystemNamespace = "eso-system"
	shardTenants         = 12
	shardLease           = 6 * time.Second
)

// shardCluster is the audited control plane and the eso processes on it.
type shardCluster struct {
	t        *testing.T
	env      *envtest.Environment
	client   client.Client
	bin, dir string
	auditLog string

	// cachedIn: by replica, the namespaces it listed or watched
	// ExternalSecrets in (from the audit log).
	cachedIn map[string]map[string]bool

	mu       sync.Mutex
	replicas map[string]*shardReplica // running
	all      []*shardReplica
}

type shardReplica struct {
	name    string
	cmd     *exec.Cmd
	metrics string
	logs    *os.File
	exited  chan struct{}
	// killedAt: killed (SIGKILL) and gone by then.
	killedAt time.Time
}

func startShardCluster(t *testing.T) *shardCluster {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(shardAuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	e := &envtest.Environment{CRDDirectoryPaths: []string{testenv.CRDDir()}, ErrorIfCRDPathMissing: true}
	e.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).Set("audit-log-path", auditLog).Set("audit-log-mode", "blocking")
	rc, err := e.Start()
	if err != nil {
		t.Fatalf("starting the audited control plane: %v", err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	c, err := client.New(rc, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "eso")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = testenv.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building eso: %v\n%s", err, out)
	}
	sc := &shardCluster{t: t, env: e, client: c, bin: bin, dir: dir, auditLog: auditLog, replicas: map[string]*shardReplica{},
		cachedIn: map[string]map[string]bool{}}
	// The replicas run as users bound to the ClusterRole the chart installs.
	role := coreRole(t)
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "eso-replicas"}}}
	sc.create(role, binding, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shardSystemNamespace}})
	return sc
}

func (sc *shardCluster) create(objs ...client.Object) {
	sc.t.Helper()
	for _, o := range objs {
		if err := sc.client.Create(context.Background(), o); err != nil {
			sc.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// start runs a replica as user eso-<name>, with short Leases so the test
// sees handovers quickly.
func (sc *shardCluster) start(name string) *shardReplica {
	t := sc.t
	t.Helper()
	user, err := sc.env.AddUser(envtest.User{Name: "eso-" + name, Groups: []string{"eso-replicas"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(sc.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "eso.log"))
	if err != nil {
		t.Fatal(err)
	}
	r := &shardReplica{name: name, metrics: freeAddr(t), logs: logs, exited: make(chan struct{})}
	r.cmd = exec.Command(sc.bin, "--mode=core", "--kubeconfig="+writeKubeconfig(t, dir, user.Config()),
		"--shards=auto", "--leader-election-namespace="+shardSystemNamespace, "--system-namespace="+shardSystemNamespace,
		"--leader-election-lease-duration="+shardLease.String(), "--leader-election-renew-deadline=4s", "--leader-election-retry-period=1s",
		"--metrics-bind-address="+r.metrics, "--health-probe-bind-address=0", "--concurrent=4", "--log-format=json", "--log-level=debug")
	r.cmd.Env = append(os.Environ(), "POD_NAME="+name)
	r.cmd.Stdout, r.cmd.Stderr = logs, logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(90 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
		_ = logs.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			t.Logf("replica %s's log (last 8 KiB):\n%s", name, tail(out, 8<<10))
		}
	})
	sc.mu.Lock()
	sc.replicas[name] = r
	sc.all = append(sc.all, r)
	sc.mu.Unlock()
	return r
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// stop ends a replica: SIGTERM lets it hand over, SIGKILL does not.
func (sc *shardCluster) stop(name string, sig syscall.Signal) {
	sc.t.Helper()
	sc.mu.Lock()
	r := sc.replicas[name]
	delete(sc.replicas, name)
	sc.mu.Unlock()
	_ = r.cmd.Process.Signal(sig)
	select {
	case <-r.exited:
	case <-time.After(90 * time.Second):
		sc.t.Fatalf("replica %s did not stop on %v", name, sig)
	}
	if sig == syscall.SIGKILL {
		// A request it had on the wire may still arrive.
		sc.mu.Lock()
		r.killedAt = time.Now().Add(time.Second)
		sc.mu.Unlock()
	}
}

// owned reads eso_shard_namespaces_owned from each running replica, and
// fails unless each counts every running replica a member.
func (sc *shardCluster) owned() (map[string]int, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	out := map[string]int{}
	for name, r := range sc.replicas {
		resp, err := http.Get("http://" + r.metrics + "/metrics")
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		owned, members := -1, -1
		for line := range strings.SplitSeq(string(body), "\n") {
			for metric, into := range map[string]*int{"eso_shard_namespaces_owned ": &owned, "eso_shard_members ": &members} {
				if v, ok := strings.CutPrefix(line, metric); ok {
					n, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return nil, err
					}
					*into = int(n)
				}
			}
		}
		if members != len(sc.replicas) {
			return nil, fmt.Errorf("replica %s counts %d members, %d run", name, members, len(sc.replicas))
		}
		out[name] = owned
	}
	return out, nil
}

// balanced waits until the running replicas, each counting all of them,
// together work every namespace of the cluster.
func (sc *shardCluster) balanced(within time.Duration) map[string]int {
	sc.t.Helper()
	var owned map[string]int
	eventuallyWithin(sc.t, within, "every namespace worked by one running replica", func() error {
		var namespaces corev1.NamespaceList
		if err := sc.client.List(context.Background(), &namespaces); err != nil {
			return err
		}
		var err error
		if owned, err = sc.owned(); err != nil {
			return err
		}
		sum := 0
		for _, n := range owned {
			sum += n
		}
		if sum != len(namespaces.Items) {
			return fmt.Errorf("replicas work %v namespaces, the cluster has %d", owned, len(namespaces.Items))
		}
		return nil
	})
	return owned
}

// owners reads the ring from the Leases once, and returns the running
// replica it gives a namespace to.
func (sc *shardCluster) owners() func(ns string) string {
	sc.t.Helper()
	var leases coordinationv1.LeaseList
	if err := sc.client.List(context.Background(), &leases, client.InNamespace(shardSystemNamespace), client.HasLabels{sharding.LabelRing}); err != nil {
		sc.t.Fatal(err)
	}
	var ids []string
	for _, l := range leases.Items {
		ids = append(ids, l.Name)
	}
	members := sharding.Members(ids)
	sc.mu.Lock()
	running := slices.Collect(maps.Keys(sc.replicas))
	sc.mu.Unlock()
	return func(ns string) string {
		owner := sharding.Owner(members, ns)
		for _, name := range running {
			if strings.HasPrefix(owner, "eso-shard-"+name+"-") {
				return name
			}
		}
		sc.t.Fatalf("no running replica owns %s (Leases %v)", ns, ids)
		return ""
	}
}

// setRemote changes the value the Fake provider of ns serves.
func (sc *shardCluster) setRemote(ns, value string) {
	sc.t.Helper()
	f := &provv1.Fake{}
	if err := sc.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fake"}, f); err != nil {
		sc.t.Fatal(err)
	}
	f.Spec.Data = []provv1.FakeSecret{{Key: "k", Value: value}}
	if err := sc.client.Update(context.Background(), f); err != nil {
		sc.t.Fatal(err)
	}
}

func (sc *shardCluster) secretValue(ns string) string {
	var s corev1.Secret
	if err := sc.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "es-0"}, &s); err != nil {
		return ""
	}
	return string(s.Data["k"])
}

// TestShardedReplicas runs three eso processes with --shards auto under
// the chart's role on one control plane, kills one (kill -9), adds a fourth
// and lets one leave, while remote values change many times a second. Each
// replica journals when it starts and stops working each namespace; the
// test checks that no two journals overlap on a namespace and, from the
// API server's audit log, that every write a replica made falls within its
// own journal.
func TestShardedReplicas(t *testing.T) {
	sc := startShardCluster(t)
	// The three start before the tenants exist, so no tenant namespace
	// ever returns to a replica that worked it before: in this test a
	// replica writing a namespace after another did is a fault.
	sc.start("a")
	sc.start("b")
	sc.start("c")
	sc.balanced(time.Minute)
	var tenants []string
	for i := range shardTenants {
		ns := fmt.Sprintf("tenant-%d", i)
		tenants = append(tenants, ns)
		sc.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			fakeConfig(ns, "fake", map[string]string{"k": "v0"}), secretStore(ns, "fake", storeSpec("Fake", "fake", ns)))
		for j := range 3 {
			es := externalSecret(ns, fmt.Sprintf("es-%d", j), "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
			es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
			sc.create(es)
		}
	}
	before := sc.balanced(time.Minute)
	t.Logf("three replicas work %v namespaces", before)
	eventually(t, "every tenant's Secret synced", func() error {
		for _, ns := range tenants {
			if v := sc.secretValue(ns); v != "v0" {
				return fmt.Errorf("%s/es-0 holds %q", ns, v)
			}
		}
		return nil
	})
	// A ClusterExternalSecret, worked by one replica, keeps its children
	// in namespaces other replicas work: it reads them from the API
	// server and finds them through their labelled metadata, which every
	// replica caches cluster-wide. Dropping a namespace prunes its child.
	ces := &esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "everyone"}, Spec: esv1.ClusterExternalSecretSpec{
		ExternalSecretName: "from-cluster", Namespaces: tenants,
		ExternalSecretSpec: externalSecret("", "", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}).Spec,
	}}
	sc.create(ces)
	eventually(t, "the ClusterExternalSecret's children in every tenant", func() error {
		if err := sc.client.Get(context.Background(), client.ObjectKeyFromObject(ces), ces); err != nil {
			return err
		}
		if got := len(ces.Status.ProvisionedNamespaces); got != len(tenants) {
			return fmt.Errorf("provisioned in %d namespaces: %v", got, ces.Status.FailedNamespaces)
		}
		return nil
	})
	ces.Spec.Namespaces = tenants[1:]
	if err := sc.client.Update(context.Background(), ces); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the child in the namespace dropped to be pruned", func() error {
		err := sc.client.Get(context.Background(), client.ObjectKey{Namespace: tenants[0], Name: "from-cluster"}, &esv1.ExternalSecret{})
		if err == nil {
			return errors.New("still there")
		}
		return client.IgnoreNotFound(err)
	})

	// Remote values change all along, many times a second, so every
	// owner writes, and a replica writing where another already does
	// shows in the audit log.
	changing := time.Now()
	stopChanging := sc.changeRemotes(tenants, "v")

	// kill -9 of the replica working the most tenants: its namespaces
	// are worked again within the Lease duration (plus a margin for this
	// busy machine).
	tenantsOf := map[string][]string{}
	victim := ""
	owner := sc.owners()
	for _, ns := range tenants {
		r := owner(ns)
		tenantsOf[r] = append(tenantsOf[r], ns)
		if victim == "" || len(tenantsOf[r]) > len(tenantsOf[victim]) {
			victim = r
		}
	}
	victimNS := tenantsOf[victim][0]
	sc.stop(victim, syscall.SIGKILL)
	stopChanging()
	killed := time.Now()
	sc.setRemote(victimNS, "after-kill")
	eventuallyWithin(t, shardLease+20*time.Second, "a change in a namespace of the killed replica to reach its Secret", func() error {
		if v := sc.secretValue(victimNS); v != "after-kill" {
			return fmt.Errorf("secret holds %q", v)
		}
		return nil
	})
	t.Logf("a change in %s, owned by the killed replica, reached its Secret %v after the kill", victimNS, time.Since(killed).Round(time.Millisecond))
	sc.balanced(shardLease + 20*time.Second)

	// A join, then a graceful leave, while values keep changing.
	stopChanging = sc.changeRemotes(tenants, "w")
	sc.start("d")
	sc.balanced(30 * time.Second)
	leaver := "a"
	if victim == "a" {
		leaver = "c"
	}
	left := time.Now()
	sc.stop(leaver, syscall.SIGTERM)
	after := sc.balanced(30 * time.Second)
	t.Logf("after %s left (%v), %v", leaver, time.Since(left).Round(time.Millisecond), after)
	stopChanging()
	var leases coordinationv1.LeaseList
	if err := sc.client.List(context.Background(), &leases, client.InNamespace(shardSystemNamespace), client.HasLabels{sharding.LabelRing}); err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, "eso-shard-"+leaver+"-") {
			t.Errorf("%s left gracefully but its Lease %s is still there", leaver, l.Name)
		}
	}
	sc.checkAudit(tenants, changing)
	// The killed replica worked only its own tenants, from their creation
	// to its end: of the tenants, it cached ExternalSecrets in exactly those.
	var cached []string
	for ns := range sc.cachedIn[victim] {
		if slices.Contains(tenants, ns) {
			cached = append(cached, ns)
		}
	}
	slices.Sort(cached)
	if want := slices.Sorted(slices.Values(tenantsOf[victim])); !slices.Equal(cached, want) {
		t.Errorf("replica %s, which worked %v, cached ExternalSecrets in %v", victim, want, cached)
	}
}

// readAt records where a replica listed or watched a kind it caches only
// in the namespaces it works: never across the cluster, except the
// metadata of ClusterExternalSecrets' children, which carry their label.
func (sc *shardCluster) readAt(replica string, ev auditEvent) {
	if ev.ObjectRef.Namespace != "" {
		if sc.cachedIn[replica] == nil {
			sc.cachedIn[replica] = map[string]bool{}
		}
		if ev.ObjectRef.Resource == "externalsecrets" {
			sc.cachedIn[replica][ev.ObjectRef.Namespace] = true
		}
		return
	}
	if ev.ObjectRef.Resource == "externalsecrets" && strings.Contains(ev.RequestURI, url.QueryEscape(esv1.LabelClusterExternalSecret)) {
		return
	}
	if ev.ObjectRef.Resource == "secrets" || ev.ObjectRef.Resource == "externalsecrets" || ev.ObjectRef.Resource == "generatorstates" {
		sc.t.Errorf("replica %s read %s across the cluster: %s", replica, ev.ObjectRef.Resource, ev.RequestURI)
	}
}

// changeRemotes changes the value every tenant's Fake provider serves,
// round after round, until the returned function is called.
func (sc *shardCluster) changeRemotes(tenants []string, prefix string) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for n := 1; ; n++ {
			for _, ns := range tenants {
				f := &provv1.Fake{}
				if err := sc.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fake"}, f); err == nil {
					f.Spec.Data = []provv1.FakeSecret{{Key: "k", Value: fmt.Sprintf("%s%d", prefix, n)}}
					_ = sc.client.Update(context.Background(), f)
				}
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// auditEvent is what the test reads of an audit log line.
type auditEvent struct {
	Stage     string                    `json:"stage"`
	Verb      string                    `json:"verb"`
	User      struct{ Username string } `json:"user"`
	ObjectRef struct {
		Resource, Namespace, Name, Subresource string
	} `json:"objectRef"`
	RequestURI     string             `json:"requestURI"`
	ResponseStatus struct{ Code int } `json:"responseStatus"`
	Received       metav1.MicroTime   `json:"requestReceivedTimestamp"`
}

func (ev auditEvent) describe() string {
	r := ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		r += "/" + ev.ObjectRef.Subresource
	}
	return fmt.Sprintf("%s (%s %s %s)", ev.Received.Format("15:04:05.000000"), ev.Verb, r, ev.ObjectRef.Name)
}

// workSpan is a time a replica worked a namespace, from its journal.
type workSpan struct {
	replica  string
	from, to time.Time
}

// journals reads every replica's record of when it started and stopped
// working each namespace (logged at debug level, to the microsecond). A
// span still open ends when its replica was killed, or never.
func (sc *shardCluster) journals() map[string][]workSpan {
	t := sc.t
	t.Helper()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	spans := map[string][]workSpan{}
	for _, r := range sc.all {
		raw, err := os.ReadFile(r.logs.Name())
		if err != nil {
			t.Fatal(err)
		}
		open := map[string]time.Time{}
		for line := range strings.SplitSeq(string(raw), "\n") {
			var rec struct {
				Msg, Namespace, At string
				Working            bool
			}
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "namespace handover" {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, rec.At)
			if err != nil {
				t.Fatalf("replica %s's journal: %v", r.name, err)
			}
			if rec.Working {
				open[rec.Namespace] = at
				continue
			}
			spans[rec.Namespace] = append(spans[rec.Namespace], workSpan{r.name, open[rec.Namespace], at})
			delete(open, rec.Namespace)
		}
		end := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
		if !r.killedAt.IsZero() {
			end = r.killedAt
		}
		for ns, from := range open {
			spans[ns] = append(spans[ns], workSpan{r.name, from, end})
		}
	}
	return spans
}

// checkAudit holds the replicas' journals against the API server's audit
// log: no two replicas' spans of one namespace overlap, and every write a
// replica made to a tenant namespace since since falls within one of its
// spans there. It also requires handovers to have happened while writes
// went on.
func (sc *shardCluster) checkAudit(tenants []string, since time.Time) {
	t := sc.t
	t.Helper()
	spans := sc.journals()
	for ns, list := range spans {
		slices.SortFunc(list, func(a, b workSpan) int { return a.from.Compare(b.from) })
		for i := 1; i < len(list); i++ {
			if prev := list[i-1]; prev.replica != list[i].replica && list[i].from.Before(prev.to) {
				t.Errorf("%s: %s started working it at %s, before %s stopped at %s",
					ns, list[i].replica, list[i].from.Format("15:04:05.000000"), prev.replica, prev.to.Format("15:04:05.000000"))
			}
		}
	}
	handovers := 0
	for _, ns := range tenants {
		for _, sp := range spans[ns] {
			if sp.from.After(since) {
				handovers++
			}
		}
	}

	f, err := os.Open(sc.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writes, outside := 0, 0
	scan := bufio.NewScanner(f)
	scan.Buffer(make([]byte, 1<<20), 16<<20)
	for scan.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(scan.Bytes(), &ev); err != nil {
			t.Fatalf("reading the audit log: %v", err)
		}
		replica, ok := strings.CutPrefix(ev.User.Username, "eso-")
		if ok && (ev.Verb == "list" || ev.Verb == "watch") {
			sc.readAt(replica, ev)
			continue
		}
		if !ok || ev.Stage != "ResponseComplete" || ev.ResponseStatus.Code >= 300 ||
			!slices.Contains(tenants, ev.ObjectRef.Namespace) || ev.Received.Before(&metav1.MicroTime{Time: since}) {
			continue
		}
		writes++
		if !slices.ContainsFunc(spans[ev.ObjectRef.Namespace], func(sp workSpan) bool {
			return sp.replica == replica && !ev.Received.Time.Before(sp.from) && !ev.Received.Time.After(sp.to)
		}) {
			if outside++; outside <= 10 {
				t.Errorf("replica %s wrote in %s outside its spans there %v: %s", replica, ev.ObjectRef.Namespace,
					spans[ev.ObjectRef.Namespace], ev.describe())
			}
		}
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("audit: %d writes by the replicas to tenant namespaces, %d outside their spans; %d spans started during the test", writes, outside, handovers)
	if handovers < 2 || writes < 100 {
		t.Fatalf("only %d handovers and %d writes: too few to judge", handovers, writes)
	}
}

// TestShardedPushSecretsFollowTheirSources: every replica, not only the
// one elected for singleton tasks, watches the Secrets its PushSecrets
// push, so a change of a source reaches the provider within pushBound
// wherever the PushSecret is worked, not at its hourly refresh.
func TestShardedPushSecretsFollowTheirSources(t *testing.T) {
	root := vaulttest.Start(t)
	sc := startShardCluster(t)
	replicas := []string{"a", "b", "c"}
	for _, name := range replicas {
		sc.start(name)
	}
	sc.balanced(time.Minute)
	// Two tenants per replica, named so by the ring before they exist.
	var tenants []string
	per := map[string]int{}
	owner := sc.owners()
	for i := 0; len(tenants) < 2*len(replicas); i++ {
		ns := fmt.Sprintf("push-tenant-%d", i)
		if r := owner(ns); per[r] < 2 {
			per[r]++
			tenants = append(tenants, ns)
		}
	}
	sources := map[string]*corev1.Secret{}
	for _, ns := range tenants {
		sc.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		sc.create(vaultPushStoreObjects(ns, "vault", root)...)
		sources[ns] = plainSecret(ns, "app", map[string]string{"password": "first"})
		sc.create(sources[ns], pushSecret(ns, "app", "app", []string{"vault"}, pushed("password", ns+"/app", "password")))
	}
	for _, ns := range tenants {
		waitKV(t, root, ns+"/app", map[string]string{"password": "first"})
	}
	changed := time.Now()
	for _, ns := range tenants {
		sources[ns].Data = map[string][]byte{"password": []byte("second")}
		if err := sc.client.Update(context.Background(), sources[ns]); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range tenants {
		waitKV(t, root, ns+"/app", map[string]string{"password": "second"})
	}
	if took := time.Since(changed); took > pushBound {
		t.Errorf("the changes reached Vault %v after they were made, want within %v", took.Round(time.Millisecond), pushBound)
	}
}
