package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// realFlags are the flags of waitroom's own flag set, read from its usage.
func realFlags(t *testing.T) map[string]bool {
	t.Helper()
	var usage bytes.Buffer
	if _, err := parseConfig([]string{"--help"}, func(string) string { return "" }, &usage); err == nil {
		t.Fatal("--help did not stop parsing")
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(usage.String(), -1) {
		flags[m[1]] = true
	}
	if !flags["redis-url"] || !flags["addr"] {
		t.Fatalf("could not read the flags from the usage:\n%s", usage.String())
	}
	return flags
}

// checkEnv: every WAITROOM_* variable is a real flag's twin, and together
// the values pass the program's own validation.
func checkEnv(t *testing.T, where string, env map[string]string) {
	t.Helper()
	flags := realFlags(t)
	twins := map[string]bool{}
	for f := range flags {
		twins[envName(f)] = true
	}
	n := 0
	for k := range env {
		if strings.HasPrefix(k, "WAITROOM_") {
			n++
			if !twins[k] {
				t.Errorf("%s: %s is not the twin of any waitroom flag", where, k)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no WAITROOM_* variables found", where)
	}
	if _, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard); err != nil {
		t.Errorf("%s: waitroom refuses this configuration: %v", where, err)
	}
}

// pinned: a version tag (not latest) or a digest.
var pinnedImage = regexp.MustCompile(`^[a-z0-9./_-]+(:[A-Za-z0-9._-]+)?(@sha256:[0-9a-f]{64})?$`)

func checkPinned(t *testing.T, where, image string) {
	t.Helper()
	_, tag, hasTag := strings.Cut(strings.SplitN(image, "@", 2)[0], ":")
	digest := strings.Contains(image, "@sha256:")
	if !pinnedImage.MatchString(image) || (!digest && (!hasTag || tag == "latest" || !regexp.MustCompile(`[0-9]`).MatchString(tag))) {
		t.Errorf("%s: image %q is not pinned to a version tag or digest", where, image)
	}
}

// composeVars replaces ${VAR:?msg} and ${VAR} with a sample value, as a
// user's environment would.
func composeVars(s string) string {
	return regexp.MustCompile(`\$\{[A-Z0-9_]+(:?[-?][^}]*)?\}`).ReplaceAllString(s, "sample-value-0123456789")
}

func readDeploy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestComposeFile: deploy/compose.yaml parses, sets only real flags with
// values waitroom accepts, pins every image, runs two waitroom servers
// sharing one signing key behind nginx, and its nginx config is the
// forward-auth example (tested with a real nginx in gate) but for
// the upstream addresses.
func TestComposeFile(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Build       any               `yaml:"build"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Command     []string          `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(composeVars(string(readDeploy(t, "compose.yaml")))), &compose); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	for _, want := range []string{"redis", "kafka", "waitroom-a", "waitroom-b", "proxy", "prometheus", "grafana", "checkout"} {
		if _, ok := compose.Services[want]; !ok {
			t.Errorf("deploy/compose.yaml has no service %s", want)
		}
	}
	for name, s := range compose.Services {
		if s.Image == "" {
			t.Errorf("service %s: no image", name)
			continue
		}
		checkPinned(t, "service "+name, s.Image)
		if strings.HasPrefix(name, "waitroom-") {
			checkEnv(t, "service "+name, s.Environment)
			if !strings.HasPrefix(s.Environment["WAITROOM_SIGNING_KEY"], "/keys/") || !contains(s.Volumes, "keys:/keys") {
				t.Errorf("service %s: the signing key must be on the shared keys volume", name)
			}
		}
	}
	if cmd := strings.Join(compose.Services["redis"].Command, " "); !strings.Contains(cmd, "--appendonly yes") {
		t.Errorf("redis runs %q, want the append-only file on", cmd)
	}
	if env := compose.Services["kafka"].Environment; !strings.Contains(env["KAFKA_PROCESS_ROLES"], "controller") {
		t.Errorf("kafka: want KRaft (process roles with controller), got %v", env)
	}

	upstreams := regexp.MustCompile(`(?s)upstream [a-z]+ \{.*?\n\}\n`)
	header := regexp.MustCompile(`(?m)\A(#.*\n)+`)
	norm := func(b []byte) string { return upstreams.ReplaceAllString(header.ReplaceAllString(string(b), ""), "") }
	if norm(readDeploy(t, "compose/nginx.conf")) != norm(readDeploy(t, "nginx/waitroom.conf")) {
		t.Error("deploy/compose/nginx.conf differs from deploy/nginx/waitroom.conf beyond its upstreams and header comment")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

type k8sContainer struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	Env   []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type k8sDoc struct {
	Kind     string                `yaml:"kind"`
	Metadata struct{ Name string } `yaml:"metadata"`
	Spec     struct {
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		MinAvailable any `yaml:"minAvailable"`
		Template     struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot   bool `yaml:"runAsNonRoot"`
					SeccompProfile struct {
						Type string `yaml:"type"`
					} `yaml:"seccompProfile"`
				} `yaml:"securityContext"`
				Containers []yaml.Node `yaml:"containers"`
				Volumes    []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		VolumeClaimTemplates []struct {
			Metadata struct{ Name string } `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
	} `yaml:"spec"`
}

// TestKubernetesManifests: deploy/kubernetes parses; the StatefulSet keeps
// the outbox on a claimed volume, sets only real flags with values waitroom
// accepts, reads the admin token and signing key from a Secret, probes
// liveness and readiness on their endpoints, sets resources, pins its
// image; a PodDisruptionBudget covers its pods.
func TestKubernetesManifests(t *testing.T) {
	dec := yaml.NewDecoder(bytes.NewReader(readDeploy(t, "kubernetes/waitroom.yaml")))
	var docs []k8sDoc
	for {
		var d k8sDoc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("deploy/kubernetes/waitroom.yaml: %v", err)
		}
		docs = append(docs, d)
	}
	var sts, pdb *k8sDoc
	for i := range docs {
		switch docs[i].Kind {
		case "StatefulSet":
			sts = &docs[i]
		case "PodDisruptionBudget":
			pdb = &docs[i]
		}
	}
	if sts == nil || pdb == nil {
		t.Fatalf("want a StatefulSet and a PodDisruptionBudget, got %d documents", len(docs))
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas < 2 {
		t.Errorf("replicas %v, want at least 2", sts.Spec.Replicas)
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if sts.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the PodDisruptionBudget selects %s=%s, which the pods do not carry", k, v)
		}
	}
	if len(sts.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(sts.Spec.Template.Spec.Containers))
	}
	var c k8sContainer
	node := sts.Spec.Template.Spec.Containers[0]
	if err := node.Decode(&c); err != nil {
		t.Fatal(err)
	}
	var probes struct {
		Liveness *struct {
			HTTPGet struct{ Path string } `yaml:"httpGet"`
		} `yaml:"livenessProbe"`
		Readiness *struct {
			HTTPGet struct{ Path string } `yaml:"httpGet"`
		} `yaml:"readinessProbe"`
	}
	if err := node.Decode(&probes); err != nil {
		t.Fatal(err)
	}
	checkPinned(t, "StatefulSet", c.Image)
	// No image is published: the manifest must not name one as if it were.
	if strings.HasPrefix(c.Image, "ghcr.io/") || strings.HasPrefix(c.Image, "docker.io/") || !strings.Contains(string(readDeploy(t, "kubernetes/waitroom.yaml")), "docker push") {
		t.Errorf("image %q: point at the user's own build and say how to push it", c.Image)
	}
	if sc := sts.Spec.Template.Spec.SecurityContext; !sc.RunAsNonRoot || sc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and seccompProfile RuntimeDefault (a restricted namespace refuses less)", sc)
	}
	env := map[string]string{}
	secrets := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			env[e.Name] = "sample-secret-0123456789"
			secrets[e.Name] = true
		}
	}
	checkEnv(t, "StatefulSet", env)
	if !secrets["WAITROOM_ADMIN_TOKEN"] {
		t.Error("the admin token must come from a Secret")
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if claim := mounts[env["WAITROOM_DATA_DIR"]]; claim == "" || len(sts.Spec.VolumeClaimTemplates) == 0 || sts.Spec.VolumeClaimTemplates[0].Metadata.Name != claim {
		t.Errorf("the data dir %q (the outbox) must be on a volume claim template", env["WAITROOM_DATA_DIR"])
	}
	keyVolume := mounts[filepath.Dir(env["WAITROOM_SIGNING_KEY"])]
	fromSecret := false
	for _, v := range sts.Spec.Template.Spec.Volumes {
		fromSecret = fromSecret || (v.Name == keyVolume && v.Secret != nil)
	}
	if !fromSecret {
		t.Errorf("the signing key %q must be mounted from a Secret", env["WAITROOM_SIGNING_KEY"])
	}
	if probes.Liveness == nil || probes.Liveness.HTTPGet.Path != "/livez" {
		t.Errorf("liveness probe %+v, want /livez", probes.Liveness)
	}
	if probes.Readiness == nil || probes.Readiness.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want /readyz", probes.Readiness)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("resources %+v, want cpu and memory requests and a memory limit", c.Resources)
	}
}

// TestDockerfile: the image builds with the release script and pins its
// base images; the image itself is built by CI where Docker runs.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1) {
		if m[1] != "scratch" {
			checkPinned(t, "Dockerfile", m[1])
		}
	}
	for _, want := range []string{"scripts/release.sh build", "USER 65532", "VOLUME /data", "HEALTHCHECK", "WAITROOM_DATA_DIR=/data"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}
