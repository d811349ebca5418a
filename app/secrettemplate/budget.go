package secrettemplate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
	"unicode/utf8"

	"github.com/eso-dev/eso/providers/plugin"
)

// A sync's budget. A template is tenant input, and so is every count an
// object multiplies work by (entries, stores, source Secrets, rewritten
// keys): without these bounds nested repeat/indent/replace, nested ranges
// or a rewrite run once per key allocate gigabytes or run for hours, and
// one object would take eso down for every namespace. Everything one sync
// of one object does (every template it renders, every key it rewrites,
// every value it builds and every byte it reads from its sources) shares
// one Budget, so eso's memory for syncs stays below the workers ×
// (MaxReadBytes + maxProduced + maxOutput) that SECURITY.md states.
const (
	// maxProduced bounds the bytes a sync builds: what every template
	// function and action produces, intermediate values included, and the
	// values it builds outside templates (Produce). A call whose output
	// would not fit is refused before it runs.
	maxProduced = 8 << 20
	// maxSteps bounds function calls, range iterations, template calls and
	// the per-key work callers count (Steps).
	maxSteps = 100_000
	// maxRenderTime bounds the time a sync spends executing templates.
	maxRenderTime = raceSlowdown * time.Second
	// maxFormatWidth bounds printf widths and precisions.
	maxFormatWidth = 4096
	// maxRenderKDF bounds the key-derivation and decryption work of a
	// sync's PKCS#12 reads, in the units of maxPkcs12Work: four archives
	// at that bound take at most about 760 ms of CPU, within maxRenderTime.
	maxRenderKDF = 4 * maxPkcs12Work
)

// MaxReadBytes bounds what one sync reads from its sources: the values an
// ExternalSecret fetches, the Secrets a PushSecret pushes, the ConfigMaps
// and Secrets templateFrom names. It is counted as each arrives, so at
// most one more answer (itself bounded) is held when it is refused.
const MaxReadBytes = 4 << 20

// ErrBudget: a sync needed more than its budget. It is an ErrTemplate.
var ErrBudget = fmt.Errorf("%w: render budget exceeded", ErrTemplate)

// ErrReadBudget: a sync's sources hold more than MaxReadBytes. It is
// plugin.ErrTooLarge: only smaller sources (or fewer) fix it.
var ErrReadBudget = fmt.Errorf("%w: more than %d bytes read in one sync", plugin.ErrTooLarge, MaxReadBytes)

// ErrRenderTime: templates ran past maxRenderTime. It is an ErrBudget, but
// unlike the other bounds it depends on the machine as much as on the
// template (a throttled or busy CPU): the same sync may fit when tried
// again.
// Its message is ErrBudget's; the bound is named after it.
var ErrRenderTime = fmt.Errorf("%w", ErrBudget)

// budgetExceeded says which bound a render passed; it never holds a value.
type budgetExceeded struct {
	what string
	// slow: the time bound, not one of work or bytes.
	slow bool
}

func (e *budgetExceeded) Error() string { return "render budget exceeded: " + e.what }
func (e *budgetExceeded) Is(target error) bool {
	return target == ErrBudget || target == ErrTemplate || (e.slow && target == ErrRenderTime)
}

// class is the sentinel a caller wraps: ErrRenderTime for the time bound,
// ErrBudget for the others.
func (e *budgetExceeded) class() error {
	if e.slow {
		return ErrRenderTime
	}
	return ErrBudget
}

func exceeded(format string, args ...any) error {
	return &budgetExceeded{what: fmt.Sprintf(format, args...)}
}

// Budget is what one sync of one object may still spend. It is used by one
// goroutine.
type Budget struct {
	read     int64
	produced int64
	steps    int
	kdf      int64
	// spent is the time templates have executed so far; running is when
	// the current execution started (zero outside one).
	spent   time.Duration
	running time.Time
}

// NewBudget is a whole sync's budget.
func NewBudget() *Budget { return &Budget{} }

// Read charges n bytes read from the sync's sources; past MaxReadBytes it
// is refused with ErrReadBudget, naming what, never a value.
func (b *Budget) Read(what string, n int64) error {
	if n < 0 || n > MaxReadBytes-b.read {
		return fmt.Errorf("%w: %s", ErrReadBudget, what)
	}
	b.read += n
	return nil
}

// Produce charges n bytes the caller is about to build (a value no template
// makes); past the budget it is refused with ErrBudget before anything is
// allocated.
func (b *Budget) Produce(what string, n int64) error {
	if err := b.charge(what, n); err != nil {
		return fmt.Errorf("%w: %s", ErrBudget, err.(*budgetExceeded).what)
	}
	return nil
}

// Steps charges n units of work done per key or per entry outside
// templates, against the same bound as template steps.
func (b *Budget) Steps(what string, n int) error {
	if n < 0 || n > maxSteps-b.steps {
		return fmt.Errorf("%w: %s takes more than %d steps", ErrBudget, what, maxSteps)
	}
	b.steps += n
	return nil
}

func (b *Budget) step() error {
	b.steps++
	if b.steps > maxSteps {
		return exceeded("more than %d function calls, range iterations and template calls", maxSteps)
	}
	if b.steps%64 == 0 {
		return b.inTime()
	}
	return nil
}

// begin and end bracket one template execution: only the time templates
// execute counts, not the provider calls of the sync around them.
func (b *Budget) begin() { b.running = time.Now() }

func (b *Budget) end() {
	b.spent += time.Since(b.running)
	b.running = time.Time{}
}

func (b *Budget) inTime() error {
	used := b.spent
	if !b.running.IsZero() {
		used += time.Since(b.running)
	}
	if used > maxRenderTime {
		return &budgetExceeded{what: fmt.Sprintf("rendering took more than %s", maxRenderTime), slow: true}
	}
	return nil
}

// fits refuses a call that would produce more than is left.
func (b *Budget) fits(fn string, n int64) error {
	if n < 0 || b.produced+n > maxProduced {
		return exceeded("%s would take the bytes produced past %d", fn, maxProduced)
	}
	return nil
}

func (b *Budget) charge(fn string, n int64) error {
	if err := b.fits(fn, n); err != nil {
		return err
	}
	b.produced += n
	return nil
}

// chargeKDF counts key-derivation work before it is done: a call that
// would pass maxRenderKDF is refused rather than left to run past the
// render's time.
func (b *Budget) chargeKDF(fn string, n int64) error {
	if n < 0 || n > maxRenderKDF-b.kdf {
		return exceeded("%s would take the key derivation and decryption past %d units", fn, maxRenderKDF)
	}
	b.kdf += n
	return nil
}

// budgetHolder lets the functions of one compiled template charge whichever
// budget the current execution uses.
type budgetHolder struct{ b *Budget }

// tickFunc is called at the start of every range iteration and every
// template body: text/template has no other hook into a loop that calls no
// function and writes nothing.
const tickFunc = "esoBudgetTick"

// instrument prepares every template of t for budgeted execution: a tick at
// the start of each template body and range iteration, and each function the
// templates use wrapped so that it is counted, refused when its output
// cannot fit, and charged for what it produced.
func instrument(t *template.Template, h *budgetHolder) {
	used := map[string]bool{}
	for _, tmpl := range t.Templates() {
		if tmpl.Tree == nil || tmpl.Root == nil {
			continue
		}
		addTicks(tmpl.Root, used)
		tmpl.Root.Nodes = append([]parse.Node{tickNode(tmpl.Root.Position())}, tmpl.Root.Nodes...)
	}
	fm := template.FuncMap{tickFunc: func() (string, error) { return "", h.b.step() }}
	for name := range used {
		fn, ok := funcMap[name]
		if !ok {
			continue
		}
		if kdf := functions[name].kdf; kdf != nil {
			fn = kdf(func(n int64) error { return h.b.chargeKDF(name, n) })
		}
		fm[name] = budgeted(name, fn, h)
	}
	t.Funcs(fm)
}

// addTicks walks a parse tree, recording the identifiers it calls and
// putting a tick at the start of every range body.
func addTicks(n parse.Node, used map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			addTicks(c, used)
		}
	case *parse.ActionNode:
		addTicks(n.Pipe, used)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			addTicks(c, used)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			addTicks(a, used)
		}
	case *parse.IdentifierNode:
		used[n.Ident] = true
	case *parse.ChainNode:
		addTicks(n.Node, used)
	case *parse.IfNode:
		addBranch(&n.BranchNode, used)
	case *parse.WithNode:
		addBranch(&n.BranchNode, used)
	case *parse.RangeNode:
		addBranch(&n.BranchNode, used)
		if n.List != nil {
			n.List.Nodes = append([]parse.Node{tickNode(n.Position())}, n.List.Nodes...)
		}
	case *parse.TemplateNode:
		addTicks(n.Pipe, used)
	}
}

func addBranch(b *parse.BranchNode, used map[string]bool) {
	addTicks(b.Pipe, used)
	addTicks(b.List, used)
	addTicks(b.ElseList, used)
}

// tickNode is {{esoBudgetTick}}, which prints nothing.
func tickNode(pos parse.Pos) parse.Node {
	ident := parse.NewIdentifier(tickFunc).SetPos(pos)
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{
		NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{ident}}},
	}}
}

var errorType = reflect.TypeFor[error]()

// budgeted wraps fn, keeping its signature so text/template converts
// arguments exactly as before.
func budgeted(name string, fn any, h *budgetHolder) any {
	v := reflect.ValueOf(fn)
	typ := v.Type()
	return reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		fail := func(err error) []reflect.Value {
			out := make([]reflect.Value, typ.NumOut())
			for i := range out {
				out[i] = reflect.Zero(typ.Out(i))
			}
			if typ.NumOut() == 2 && typ.Out(1) == errorType {
				out[1] = reflect.ValueOf(&err).Elem()
				return out
			}
			panic(err) // text/template reports a panicking function as its error
		}
		b := h.b
		if err := b.step(); err != nil {
			return fail(err)
		}
		if err := b.fits(name, estimate(name, args, b)); err != nil {
			return fail(err)
		}
		var out []reflect.Value
		if typ.IsVariadic() {
			out = v.CallSlice(args) // MakeFunc hands the variadic arguments over as one slice
		} else {
			out = v.Call(args)
		}
		if len(out) > 0 {
			if err := b.charge(name, sizeOf(out[0], maxProduced-b.produced)); err != nil {
				return fail(err)
			}
		}
		// Some calls take milliseconds (bcrypt, RSA, PKCS#12): the time
		// bound is checked after every call, not only every 64 steps.
		if err := b.inTime(); err != nil {
			return fail(err)
		}
		return out
	}).Interface()
}

// pieces is how many parts splitting s at sep makes (strings.Split's
// count: one per rune when sep is empty), counted without building them
// and capped at limit.
func pieces(s, sep string, limit int64) int64 {
	if sep == "" {
		return min(int64(utf8.RuneCountInString(s)), limit)
	}
	return min(int64(strings.Count(s, sep))+1, limit)
}

// pieceSize is what one piece of a split costs beyond its bytes, which it
// shares with the input: a string header in a list, a map entry with its
// "_N" key in split's and splitn's dicts.
func pieceSize(name string) int64 {
	if name == "split" || name == "splitn" {
		return 64
	}
	return 16
}

// intArgs are the int arguments of a call, a variadic slice of them
// included.
func intArgs(args []reflect.Value) []int {
	var out []int
	for _, a := range args {
		switch {
		case a.CanInt():
			out = append(out, int(a.Int()))
		case a.Kind() == reflect.Slice && a.Type().Elem().Kind() == reflect.Int:
			for i := range a.Len() {
				out = append(out, int(a.Index(i).Int()))
			}
		}
	}
	return out
}

// formatWidth is the largest width or precision a printf format asks for,
// or -1 for one that is too large or given by an argument (*).
func formatWidth(format string) int64 {
	var widest int64
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			if c == '*' {
				return -1
			}
			if c >= '0' && c <= '9' {
				var w int64
				for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
					if w = w*10 + int64(format[i]-'0'); w > maxFormatWidth {
						return -1
					}
				}
				widest = max(widest, w)
				i--
				continue
			}
			if !strings.ContainsRune("+-# .", rune(c)) {
				break // the verb
			}
		}
	}
	return widest
}

func mulCapped(a, b, limit int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	if a == 0 || b == 0 {
		return 0
	}
	if a > (limit+1)/b+1 {
		return limit + 1
	}
	return a * b
}

func sizeOfAll(args []reflect.Value, limit int64) int64 {
	var n int64
	for _, a := range args {
		if n += sizeOf(a, limit-n); n > limit {
			break
		}
	}
	return n
}

// sizeOf is the memory a value holds, counted deeply (8 bytes per element on
// top of string bytes, so a list of many empty values is not free), and
// stopping once it passes limit: a list holding the same large list many
// times costs its full size, which is what joining or printing it makes.
func sizeOf(v reflect.Value, limit int64) int64 {
	var n int64
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if n > limit || !v.IsValid() {
			return
		}
		n += 8
		switch v.Kind() {
		case reflect.String:
			n += int64(v.Len())
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				n += int64(v.Len())
				return
			}
			for i := 0; i < v.Len() && n <= limit; i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() && n <= limit {
				walk(it.Key())
				walk(it.Value())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField() && n <= limit; i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(v)
	return n
}

// shape counts the elements of args and their deepest nesting.
func shape(args []reflect.Value, limit int64) (nodes, depth int64) {
	var walk func(v reflect.Value, d int64)
	walk = func(v reflect.Value, d int64) {
		if nodes > limit || !v.IsValid() {
			return
		}
		nodes++
		depth = max(depth, d)
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), d)
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() != reflect.Uint8 {
				for i := 0; i < v.Len() && nodes <= limit; i++ {
					walk(v.Index(i), d+1)
				}
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() && nodes <= limit {
				walk(it.Value(), d+1)
			}
		}
	}
	for _, a := range args {
		walk(a, 0)
	}
	return nodes, depth
}

// budgetError is the budget refusal inside an execution error, however
// text/template wrapped it.
func budgetError(err error) (*budgetExceeded, bool) {
	var be *budgetExceeded
	return be, errors.As(err, &be)
}
