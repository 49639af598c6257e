package pgtest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

func TestMain(m *testing.M) { Main(m, nil) }

// Main runs parallelPerCPU parallel tests per CPU unless -parallel is
// given.
func TestParallelRaised(t *testing.T) {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.parallel") {
			t.Skip("-parallel is given: Main leaves it")
		}
	}
	want := strconv.Itoa(parallelPerCPU * runtime.GOMAXPROCS(0))
	if Full() {
		want = strconv.Itoa(runtime.GOMAXPROCS(0)) // go test's own default
	}
	if got := flag.Lookup("test.parallel").Value.String(); got != want {
		t.Fatalf("-test.parallel is %s, want %s", got, want)
	}
}

// The harness decides whether an image is up to date by the same recipe
// hash that build.sh writes into the image's label.
func TestRecipeHashMatchesBuildScript(t *testing.T) {
	out, err := exec.Command("bash", "-c", "cat image/build.sh image/docker-entrypoint.sh | sha256sum | cut -c1-16").Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := imageRecipe()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("imageRecipe() = %s, build.sh computes %s", got, want)
	}
}

// Every server runs the major version asked for, and the servers the
// harness starts listen on the loopback only when it reaches them there.
func TestServersVersionsAndPublishedPorts(t *testing.T) {
	ss := Servers(t)
	if os.Getenv(EnvImages) == "" && os.Getenv(EnvURL) == "" {
		var got []int
		for _, s := range ss {
			got = append(got, s.Major)
		}
		if len(got) != len(versions()) {
			t.Fatalf("servers %v, want %v", got, versions())
		}
		for i, v := range versions() {
			if got[i] != v {
				t.Fatalf("servers %v, want %v", got, versions())
			}
		}
	}
	for _, s := range ss {
		t.Logf("%s: %s", s.Name, s.Image)
		if s.ctr == nil {
			continue
		}
		info, err := docker.cli.ContainerInspect(context.Background(), s.ctr.GetContainerID(), client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if info.Container.Config.Labels[labelOwner] != "1" {
			t.Errorf("%s: container not labelled as the harness's", s.Name)
		}
		for port, bindings := range info.Container.HostConfig.PortBindings {
			for _, b := range bindings {
				if docker.loopback && (!b.HostIP.IsValid() || !b.HostIP.IsLoopback()) {
					t.Errorf("%s: port %s published on %q, want the loopback only", s.Name, port, b.HostIP)
				}
			}
		}
	}
}

// A container left behind by a test process that no longer runs is removed
// by the next run when there is no reaper.
func TestOrphansRemoved(t *testing.T) {
	ss := Servers(t)
	if ss[0].Image == "" || !docker.noRyuk {
		t.Skip("only without the Ryuk reaper, on containers")
	}
	ctx := context.Background()
	labels := containerLabels()
	labels[labelPID] = "4194303" // above Linux's pid_max default: not a live process
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{Image: ss[0].Image, Labels: labels, Entrypoint: []string{"true"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := ctr.GetContainerID()
	removeOrphans(ctx, docker.cli)
	if _, err := docker.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err == nil {
		_ = testcontainers.TerminateContainer(ctr)
		t.Fatalf("orphan container %s was not removed", id)
	}
	// The harness's own containers, whose process is alive, stay.
	for _, s := range ss {
		if _, err := docker.cli.ContainerInspect(ctx, s.ctr.GetContainerID(), client.ContainerInspectOptions{}); err != nil {
			t.Fatalf("%s: the live server's container was removed: %v", s.Name, err)
		}
	}
}

// TestSpreadCoversEveryKindOnce: a quick run's shares of a loop over n
// variants hold every kind exactly once; a full run runs every kind in
// every variant. Scale follows the same switch.
func TestSpreadCoversEveryKindOnce(t *testing.T) {
	kinds := []string{"plain", "custom", "no-owner", "sections", "psql", "directory"}
	t.Setenv(EnvFull, "")
	var seen []string
	for i := range 3 {
		share := Spread(kinds, i, 3)
		if len(share) != 2 {
			t.Fatalf("variant %d runs %v, want 2 kinds", i, share)
		}
		seen = append(seen, share...)
	}
	slices.Sort(seen)
	if want := slices.Sorted(slices.Values(kinds)); !slices.Equal(seen, want) {
		t.Fatalf("the shares hold %v, want each of %v once", seen, want)
	}
	if got := Spread(kinds, 4, 1); !slices.Equal(got, kinds) {
		t.Fatalf("one variant runs %v, want every kind", got)
	}
	if Scale(100, 10) != 10 {
		t.Fatal("a quick run's Scale is not the quick volume")
	}
	t.Setenv(EnvFull, "1")
	if got := Spread(kinds, 1, 3); !slices.Equal(got, kinds) {
		t.Fatalf("a full run's variant runs %v, want every kind", got)
	}
	if Scale(100, 10) != 100 {
		t.Fatal("a full run's Scale is not the full volume")
	}
}
