package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a child process: the control plane or eso.
type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid once done is closed
}

// startProc starts argv with its output in logPath. The child gets its own
// process group, so a Ctrl-C reaches only the benchmark, which then stops eso
// before the control plane; Pdeathsig stops it even if the benchmark is killed.
func startProc(name, logPath string, argv ...string) (*proc, error) {
	return startProcEnv(name, logPath, nil, argv...)
}

// startProcEnv is startProc with env added to the benchmark's environment.
func startProcEnv(name, logPath string, env []string, argv ...string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited returns an error if the process is no longer running.
func (p *proc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited early (%v); last log lines:\n%s", p.name, p.err, tail(p.log, 20))
	default:
		return nil
	}
}

// stop asks the process to exit and kills it, with whatever it started, if
// it has not within grace.
func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	// envtest starts kube-apiserver and etcd in process groups of their own,
	// so killing the control plane alone would leave them running.
	for _, pid := range descendants(p.pid()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// descendants lists the processes started by pid, children first.
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(raw)) {
			if child, err := strconv.Atoi(f); err == nil {
				out = append(out, child)
				out = append(out, descendants(child)...)
			}
		}
	}
	return out
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort returns a TCP port free on 127.0.0.1 right now. Another process
// could take it before eso binds it; on this single-user bench that is
// unlikely enough, and eso would then fail loudly.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// memory is a process's resident set from /proc/<pid>/status, in bytes.
type memory struct {
	RSS  uint64 // VmRSS: resident now
	Peak uint64 // VmHWM: highest resident ever
}

func readMemory(pid int) (memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	return parseStatus(raw)
}

func parseStatus(raw []byte) (memory, error) {
	var m memory
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest) // e.g. "12345 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return m, fmt.Errorf("unexpected %s line %q", name, sc.Text())
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return m, err
		}
		if name == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.Peak = kb << 10
		}
		found++
	}
	if found != 2 {
		return m, errors.New("VmRSS or VmHWM missing from /proc/<pid>/status")
	}
	return m, nil
}

// clockTicks is USER_HZ, the unit of utime and stime. Linux fixes it at 100
// for user space on every architecture Go supports; reading it via sysconf
// would need cgo, which this repository builds without.
const clockTicks = 100

// cpuSeconds is the user plus system CPU time pid has used.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(raw)
}

func parseStat(raw []byte) (float64, error) {
	// The command name (field 2) is in parentheses and may contain spaces, so
	// count fields from the last ')': state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	fields := strings.Fields(string(raw[i+1:]))
	if len(fields) < 13 {
		return 0, errors.New("short /proc/<pid>/stat")
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, err
	}
	return float64(utime+stime) / clockTicks, nil
}

// competitors lists the processes already running that would share this
// machine's cores with the benchmark (a control plane or eso left by a
// killed test run, or a test running now), as "name (pid N)".
func competitors() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		switch name := strings.TrimSpace(string(comm)); name {
		case "etcd", "kube-apiserver", "eso":
			found = append(found, fmt.Sprintf("%s (pid %d)", name, pid))
		}
	}
	return found
}

// controlPlaneCPU is the CPU time the benchmark's own API server and etcd
// (processes named kube-apiserver or etcd that descend from this one) have
// used: what eso's requests and watches cost the control plane, against
// the raw client's.
func controlPlaneCPU() (float64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	parents := map[int]int{}
	candidates := map[int][]byte{} // pid: its stat, which also holds its CPU time
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone since the directory was read
		}
		name, ppid, ok := parseNameAndParent(raw)
		if !ok {
			continue
		}
		parents[pid] = ppid
		if name == "kube-apiserver" || name == "etcd" {
			candidates[pid] = raw
		}
	}
	total, found := 0.0, 0
	for pid, stat := range candidates {
		if !descendsFrom(pid, os.Getpid(), parents) {
			continue
		}
		s, err := parseStat(stat)
		if err != nil {
			return 0, err
		}
		total += s
		found++
	}
	if found == 0 {
		return 0, errors.New("no kube-apiserver or etcd of this benchmark's found in /proc")
	}
	return total, nil
}

// parseNameAndParent reads the command name (field 2) and parent pid
// (field 4) of a /proc/<pid>/stat.
func parseNameAndParent(raw []byte) (name string, ppid int, ok bool) {
	open, end := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(string(raw[end+1:]))
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return string(raw[open+1 : end]), ppid, err == nil
}

func descendsFrom(pid, ancestor int, parents map[int]int) bool {
	for seen := 0; pid > 1 && seen < len(parents); seen++ {
		if pid = parents[pid]; pid == ancestor {
			return true
		}
	}
	return false
}
