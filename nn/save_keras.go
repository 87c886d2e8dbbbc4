package nn

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/hdf5"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/safetensors"
)

// Keras' HDF5 weights files, both ways.
//
// Keras 3 (model.save_weights("x.weights.h5"), and the model.weights.h5
// inside a .keras archive) keeps each layer's variables under
// layers/<name>/vars/<i>: <name> is the snake-case class name, numbered
// per class in the order of model.layers (dense, dense_1, conv2d, ...:
// not the layer's own name), and <i> counts the layer's trainable, then
// its non-trainable variables, in the order the layer made them. Other
// groups (the optimizer's, metrics') are not weights and are skipped.
//
// Keras 2 (model.save_weights("x.h5"), and the model_weights group of a
// model.save("x.h5") file) lists the layers in the root attribute
// layer_names; each layer's group lists its weights in the attribute
// weight_names ("dense/kernel:0", ...), each a dataset at that path in the
// group. Keras 2 loads them by position (its by_name=False): the n-th
// layer that has weights in the file gives the n-th layer of the model
// that has weights its values, in order; so does gokeras.
//
// A file read here becomes a safetensors.File whose tensors are renamed to
// the model's "<layer>/<weight>" names (kerasTensors) before the one check
// of weightPlan, so its errors and the strategy's agreement on the file
// are those of gokeras' own files.

// The metadata of a Keras file read into a safetensors.File.
const (
	kindKeras       = "keras-hdf5" // metaKind of a Keras HDF5 weights file
	metaKerasLayout = metaPrefix + "keras.layout"
	kerasLayout3    = "3" // layers/<name>/vars/<i>
	kerasLayout2    = "2" // layer_names, weight_names
	// metaKerasGroup is the group a Keras 2 file keeps its layers in:
	// "model_weights/" in a whole-model file, "" in a weights file. A
	// tensor's name before renaming is its dataset's path, the layer's
	// name first after the group.
	metaKerasGroup = metaPrefix + "keras.group"
)

// hdf5Signature starts every HDF5 file (at offset 0 in Keras' files).
const hdf5Signature = "\x89HDF\r\n\x1a\n"

// isKerasWeightsPath says whether SaveWeights writes path in Keras' HDF5
// format: ".weights.h5" is Keras 3's (the only name Keras 3's
// save_weights takes), any other ".h5" Keras 2's.
func isKerasWeightsPath(path string) (layout string, ok bool) {
	switch p := strings.ToLower(path); {
	case strings.HasSuffix(p, ".weights.h5"):
		return kerasLayout3, true
	case strings.HasSuffix(p, ".h5"), strings.HasSuffix(p, ".hdf5"):
		return kerasLayout2, true
	}
	return "", false
}

// kerasNames gives, for each layer of m with weights, the group Keras 3
// keeps its variables in: the snake-case class name, numbered per class in
// layer order (Keras 3's saving_lib names containers' members so, by
// class, not by the layers' own names).
//
// A functional model's layers, its input layers among them, are numbered
// in Keras 3's order of Functional.layers (kerasOrder), which Keras makes
// again from the graph whatever the order of the layers in its config.
func (m *Sequential) kerasNames() map[layers.Layer]string {
	used := map[string]int{}
	names := map[layers.Layer]string{}
	order := m.layers
	if m.graph != nil {
		order = m.kerasOrder()
	}
	for _, l := range order {
		base := snakeCase(l.Type())
		name := base
		if n, ok := used[base]; ok {
			used[base] = n + 1
			name = fmt.Sprintf("%s_%d", base, n+1)
		} else {
			used[base] = 0
		}
		names[l] = name
	}
	return names
}

// kerasOrder is the order of a functional model's layers in Keras 3's
// Functional.layers, its input layers included: Keras' map_graph walks
// the graph depth first from the outputs, each call's inputs in order,
// numbering each layer when first met; a call's depth is the longest path
// from it to an output, a layer's the deepest of its calls; the layers
// then come deepest first, those of equal depth in the order met.
func (m *Sequential) kerasOrder() []layers.Layer {
	g := m.graph
	// A node is a call, or a model's input (the InputLayer's node).
	type node = any
	opOf := func(n node) layers.Layer {
		if c, ok := n.(*layerCall); ok {
			return c.layer
		}
		return n.(*Tensor).input
	}
	nodeOf := func(t *Tensor) node {
		if t.from != nil {
			return t.from
		}
		return t
	}
	met := map[layers.Layer]int{}
	finished := map[node]bool{}
	var post []node
	var walk func(t *Tensor)
	walk = func(t *Tensor) {
		n := nodeOf(t)
		if finished[n] {
			return
		}
		if _, ok := met[opOf(n)]; !ok {
			met[opOf(n)] = len(met)
		}
		if c, ok := n.(*layerCall); ok {
			for _, in := range c.in {
				walk(in)
			}
		}
		finished[n] = true
		post = append(post, n)
	}
	for _, out := range g.outputs {
		walk(out)
	}
	nodeDepth := map[node]int{}
	opDepth := map[layers.Layer]int{}
	for i := len(post) - 1; i >= 0; i-- {
		n := post[i]
		d := max(nodeDepth[n], opDepth[opOf(n)])
		opDepth[opOf(n)], nodeDepth[n] = d, d
		if c, ok := n.(*layerCall); ok {
			for _, in := range c.in {
				p := nodeOf(in)
				nodeDepth[p] = max(nodeDepth[p], d+1)
			}
		}
	}
	for _, in := range g.inputs { // an input no output depends on
		if _, ok := opDepth[in.input]; !ok {
			opDepth[in.input], met[in.input] = 0, -1
		}
	}
	order := slices.Collect(maps.Keys(opDepth))
	slices.SortFunc(order, func(a, b layers.Layer) int {
		if opDepth[a] != opDepth[b] {
			return opDepth[b] - opDepth[a]
		}
		return met[a] - met[b]
	})
	return order
}

// writeKerasWeights writes the model's weights to w as Keras' save_weights
// does, in the layout given (kerasLayout3 or kerasLayout2).
func (m *Sequential) writeKerasWeights(w io.Writer, layout string) error {
	return m.writeKerasFile(w, layout, nil)
}

// writeKerasFile is writeKerasWeights, with more added to the file's root
// by more (a .keras archive's optimizer variables) when not nil.
func (m *Sequential) writeKerasFile(w io.Writer, layout string, more func(root *hdf5.Node) error) error {
	if err := m.syncWeights(); err != nil {
		return err
	}
	f := hdf5.NewWriter()
	root := f.Root()
	if layout == kerasLayout2 {
		if err := m.writeKeras2Weights(root); err != nil {
			return err
		}
	} else {
		// Every layer has its group, with a vars group named after the
		// layer (its "name" attribute), whether it has weights or not;
		// a functional model's input layers are among its layers in
		// Keras 3, first.
		names := m.kerasNames()
		ls := root.Group("layers")
		order := m.layers
		if m.graph != nil {
			order = m.kerasOrder()
		}
		for _, l := range order {
			g := ls.Group(names[l])
			vars := g.Group("vars").Attr("name", hdf5.VarString(l.Name()))
			if cell := kerasCell(l); cell != "" {
				// Keras 3 keeps a recurrent layer's weights in its
				// cell: layers/lstm/cell/vars/0.
				vars = g.Group("cell").Group("vars").Attr("name", hdf5.VarString(cell))
			}
			for i, p := range l.Params() {
				at, name := vars, strconv.Itoa(i)
				if place := kerasVariable(l, i); place != "" {
					// A weight of a sublayer: _query_dense/vars/0.
					at = g
					for dir, rest, ok := strings.Cut(place, "/"); ok; dir, rest, ok = strings.Cut(name, "/") {
						at, name = at.Group(dir), rest
					}
				}
				if err := m.kerasDataset(at, name, l, p); err != nil {
					return err
				}
			}
		}
		root.Group("vars").Attr("name", hdf5.VarString(m.name))
	}
	if more != nil {
		if err := more(root); err != nil {
			return err
		}
	}
	_, err := f.WriteTo(w)
	return err
}

// kerasOrderOf is the model's layers in the order Keras lists them in
// model.layers: a Sequential's own order, a functional model's
// kerasOrder without its input layers.
func (m *Sequential) kerasOrderOf() []layers.Layer {
	if m.graph == nil {
		return m.layers
	}
	var out []layers.Layer
	for _, l := range m.kerasOrder() {
		if _, ok := l.(*layers.InputLayer); !ok {
			out = append(out, l)
		}
	}
	return out
}

// writeKeras2Weights writes the model's weights into g as Keras 2 lays
// them out (the root of a save_weights file, the model_weights group of a
// model file): the layers, in Keras' order, in layer_names; each layer's
// group listing its weights in weight_names, each a dataset at that path.
func (m *Sequential) writeKeras2Weights(g *hdf5.Node) error {
	g.Attr("backend", "tensorflow").Attr("keras_version", keras2Version)
	order := m.layers
	if m.graph != nil {
		order = m.kerasOrder() // its input layers too, as Keras 2 lists them
	}
	var names []string
	for _, l := range order {
		names = append(names, l.Name())
	}
	g.Attr("layer_names", names)
	for _, l := range order {
		lg := g.Group(l.Name())
		if len(l.Params()) == 0 {
			lg.Attr("weight_names", []string{})
			continue
		}
		// A recurrent layer's weights are its cell's:
		// lstm/lstm_cell/kernel:0.
		prefix, at := l.Name()+"/", lg.Group(l.Name())
		if cell := kerasCell(l); cell != "" {
			prefix, at = prefix+cell+"/", at.Group(cell)
		}
		var wn []string
		for _, p := range l.Params() {
			wn = append(wn, prefix+p.Name+":0")
		}
		lg.Attr("weight_names", wn)
		for _, p := range l.Params() {
			// A weight of a sublayer (MultiHeadAttention's query/kernel)
			// sits in the sublayer's group.
			g, name := at, p.Name
			for dir, rest, ok := strings.Cut(name, "/"); ok; dir, rest, ok = strings.Cut(name, "/") {
				g, name = g.Group(dir), rest
			}
			if err := m.kerasDataset(g, name+":0", l, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// kerasVariable is where Keras 3 keeps weight i of l under the layer's
// group when l keeps it in a sublayer (MultiHeadAttention's
// "_query_dense/vars/0"), or "".
func kerasVariable(l layers.Layer, i int) string {
	if v, ok := l.(interface{ KerasVariable(i int) string }); ok {
		return v.KerasVariable(i)
	}
	return ""
}

// kerasCell is the name of the cell Keras keeps a layer's weights in
// (a recurrent layer's: "lstm_cell"), or "" for a layer that keeps its
// own.
func kerasCell(l layers.Layer) string {
	if c, ok := l.(interface{ KerasCell() string }); ok {
		return c.KerasCell()
	}
	return ""
}

// keras2Version is the Keras version the Keras 2 files gokeras writes
// name: the last Keras 2 release, whose loader reads them.
const keras2Version = "2.15.0"

// kerasDataset adds the weight p of layer l as the dataset name of g,
// refusing values that are not finite as every gokeras file does.
func (m *Sequential) kerasDataset(g *hdf5.Node, name string, l layers.Layer, p *layers.Param) error {
	data := p.Value.Data().([]float32)
	if i := firstNonFinite(data); i >= 0 {
		return m.diverged("weight "+l.Name()+"/"+p.Name, data[i], i)
	}
	g.Dataset(name, kerasWeightShape(l, p), data)
	return nil
}

// kerasWeightShape is the shape Keras keeps weight p of layer l in: its own but
// for the scalars gokeras keeps as vectors of one (see scalarAsVector):
// Normalization's count (an int64 in Keras, which a float32 assigns to)
// and Attention's scale and concat_score_weight.
func kerasWeightShape(l layers.Layer, p *layers.Param) []int {
	if l.Type() == "Normalization" && p.Name == "count" || l.Type() == "Attention" {
		return nil
	}
	return p.Value.Shape().Clone()
}

// saveKerasWeights is SaveWeights for a path in Keras' format.
func (m *Sequential) saveKerasWeights(path, layout string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return m.writeKerasWeights(w, layout) })
}

// readKerasFile reads a Keras HDF5 weights file (of size bytes, from r)
// into a safetensors.File holding its weights under their places in the
// file; check sees them, as declared, before their values are read.
func readKerasFile(r io.ReaderAt, size int64, config string, check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
	f, err := hdf5.Read(r, size)
	if err != nil {
		return nil, fmt.Errorf("reading it as a Keras weights file: %w", err)
	}
	type found struct {
		name string
		d    *hdf5.Dataset
	}
	var all []found
	root := f.Root()
	meta := map[string]string{metaKind: kindKeras}
	if config != "" {
		meta[metaKerasConfig] = config
	} else if slices.Contains(root.AttrNames(), "model_config") {
		// Keras 2's whole-model file: its architecture.
		c, err := root.AttrString("model_config")
		if err != nil {
			return nil, fmt.Errorf("its model_config attribute: %w", err)
		}
		meta[metaKerasConfig] = c
		if slices.Contains(root.AttrNames(), "training_config") {
			if t, err := root.AttrString("training_config"); err == nil {
				meta[metaKerasCompile] = t
			}
		}
	}
	weightsGroup := root
	if g, err := root.Group("model_weights"); err == nil {
		weightsGroup = g // Keras 2's whole-model file: its weights
	}
	switch {
	case hasGroup(root, "layers") || hasGroup(root, "_layer_checkpoint_dependencies"):
		meta[metaKerasLayout] = kerasLayout3
		top := "layers"
		if !hasGroup(root, top) {
			top = "_layer_checkpoint_dependencies" // Keras 2.13's name for it
		}
		// A .keras archive's optimizer variables (optimizer/vars/0, ...),
		// for restoreKerasOptimizer; "optimizer/" tensors are no weights.
		if vars, err := root.Group("optimizer/vars"); err == nil {
			n := len(vars.Names())
			for i := range n {
				d, err := vars.Dataset(strconv.Itoa(i))
				if err != nil {
					return nil, fmt.Errorf("optimizer/vars holds %d members, not the datasets 0 to %d Keras 3 writes: %w", n, n-1, err)
				}
				all = append(all, found{kerasOptimizerVars + strconv.Itoa(i), d})
			}
			// The step count, exactly (an int64 Float32 would round).
			if d, err := vars.Dataset("0"); err == nil {
				if it, err := d.Int64(); err == nil && len(it) == 1 {
					meta[metaKerasIterations] = strconv.FormatInt(it[0], 10)
				}
			}
		}
		g, _ := root.Group(top)
		for _, name := range g.Names() {
			// A layer's own variables, then its cell's (a recurrent
			// layer's: layers/lstm/cell/vars).
			ats := []string{name + "/vars", name + "/cell/vars"}
			if lg, err := g.Group(name); err == nil {
				// Sublayers' variables (MultiHeadAttention's
				// layers/multi_head_attention/_query_dense/vars).
				for _, sub := range lg.Names() {
					if (strings.HasPrefix(sub, "_") || sub == "layer") && hasGroup(lg, sub+"/vars") {
						ats = append(ats, name+"/"+sub+"/vars")
					}
					// A wrapped recurrent layer's cell (Bidirectional's
					// layers/bidirectional/forward_layer/cell/vars).
					if hasGroup(lg, sub+"/cell/vars") {
						ats = append(ats, name+"/"+sub+"/cell/vars")
					}
				}
			}
			for _, at := range ats {
				vars, err := g.Group(at)
				if err != nil {
					continue // a layer without variables, or not a layer's group
				}
				n := len(vars.Names())
				for i := range n {
					d, err := vars.Dataset(strconv.Itoa(i))
					if err != nil {
						return nil, fmt.Errorf("%s/%s holds %d members, not the datasets 0 to %d Keras 3 writes: %w", top, at, n, n-1, err)
					}
					all = append(all, found{"layers/" + at + "/" + strconv.Itoa(i), d})
				}
			}
		}
	case slices.Contains(weightsGroup.AttrNames(), "layer_names"):
		meta[metaKerasLayout] = kerasLayout2
		prefix := ""
		if weightsGroup != root {
			prefix = "model_weights/"
		}
		meta[metaKerasGroup] = prefix
		names, err := kerasStrings(weightsGroup, "layer_names")
		if err != nil {
			return nil, err
		}
		for _, layer := range names {
			g, err := weightsGroup.Group(layer)
			if err != nil {
				return nil, fmt.Errorf("layer_names lists %q but the file has no group for it: %w", layer, err)
			}
			wn, err := kerasStrings(g, "weight_names")
			if err != nil {
				return nil, err
			}
			for _, w := range wn {
				d, err := g.Dataset(w)
				if err != nil {
					return nil, fmt.Errorf("layer %q lists weight %q but the file has no dataset for it: %w", layer, w, err)
				}
				all = append(all, found{prefix + layer + "/" + w, d})
			}
		}
	default:
		return nil, errors.New("an HDF5 file, but not Keras weights: it has neither Keras 3's layers group nor Keras 2's layer_names attribute")
	}
	declared := make([]safetensors.Declared, len(all))
	for i, w := range all {
		declared[i] = safetensors.Declared{Name: w.name, Shape: w.d.Shape(), Values: shapes.Size(w.d.Shape())}
	}
	if check != nil {
		if err := check(meta, declared); err != nil {
			return nil, err
		}
	}
	out := &safetensors.File{Metadata: meta}
	for _, w := range all {
		v, err := w.d.Float32()
		if err != nil {
			return nil, err
		}
		out.Tensors = append(out.Tensors, safetensors.Tensor{Name: w.name, Shape: w.d.Shape(), Data: v})
	}
	return out, nil
}

// kerasStrings reads the string list attribute name of g, which Keras
// splits into name0, name1, ... when it is longer than an HDF5 header
// holds. An empty list is what Keras 2 writes as np.asarray([]) for a
// layer without weights: an empty array of float64, not of strings.
func kerasStrings(g *hdf5.Group, name string) ([]string, error) {
	if slices.Contains(g.AttrNames(), name) {
		s, err := g.AttrStrings(name)
		if err != nil {
			switch v, _ := g.Attr(name); v := v.(type) {
			case []float64:
				if len(v) == 0 {
					return nil, nil
				}
			case []int64:
				if len(v) == 0 {
					return nil, nil
				}
			}
		}
		return s, err
	}
	var all []string
	for i := 0; slices.Contains(g.AttrNames(), name+strconv.Itoa(i)); i++ {
		part, err := g.AttrStrings(name + strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		all = append(all, part...)
	}
	if all == nil && !slices.Contains(g.AttrNames(), name+"0") {
		return nil, fmt.Errorf("%s has no attribute %q: not a Keras 2 weights file", g.Name(), name)
	}
	return all, nil
}

func hasGroup(g *hdf5.Group, name string) bool {
	_, err := g.Group(name)
	return err == nil
}

// kerasTensors renames the tensors of a Keras file read by readKerasFile
// to the model's weights, "<layer>/<weight>", matching as Keras' loader of
// that layout does; what does not match is an error naming both sides.
func (m *Sequential) kerasTensors(f *safetensors.File, path string) ([]safetensors.Tensor, error) {
	var withWeights []layers.Layer
	for _, l := range m.kerasOrderOf() {
		if len(l.Params()) > 0 {
			withWeights = append(withWeights, l)
		}
	}
	renamed := make([]safetensors.Tensor, 0, len(f.Tensors))
	if f.Metadata[metaKerasLayout] == kerasLayout3 {
		names := m.kerasNames()
		byPlace := map[string]string{}
		shapeOf := map[string][]int{}
		var want []string
		for _, l := range withWeights {
			for i, p := range l.Params() {
				place := "layers/" + names[l] + "/vars/" + strconv.Itoa(i)
				if kerasCell(l) != "" {
					place = "layers/" + names[l] + "/cell/vars/" + strconv.Itoa(i)
				}
				if v := kerasVariable(l, i); v != "" {
					place = "layers/" + names[l] + "/" + v
				}
				byPlace[place] = l.Name() + "/" + p.Name
				shapeOf[l.Name()+"/"+p.Name] = p.Value.Shape().Clone()
				want = append(want, place)
			}
		}
		for _, t := range f.Tensors {
			if strings.HasPrefix(t.Name, kerasOptimizerVars) {
				renamed = append(renamed, t) // restoreKerasOptimizer's
				continue
			}
			name, ok := byPlace[t.Name]
			if !ok {
				return nil, fmt.Errorf("%s holds %s, a variable of no layer of model %q (Keras 3 names a layer's variables by its class, numbered in layer order; the model's are %s): was the file saved from another model?",
					path, t.Name, m.name, strings.Join(want, ", "))
			}
			t.Name = name
			renamed = append(renamed, scalarAsVector(t, shapeOf[name]))
		}
		return renamed, nil
	}
	// Keras 2: the file's layers that have weights, in order, to the
	// model's, in order.
	var fileLayers []string
	perLayer := map[string][]safetensors.Tensor{}
	for _, t := range f.Tensors {
		layer, _, _ := strings.Cut(strings.TrimPrefix(t.Name, f.Metadata[metaKerasGroup]), "/")
		if len(perLayer[layer]) == 0 {
			fileLayers = append(fileLayers, layer)
		}
		perLayer[layer] = append(perLayer[layer], t)
	}
	if len(fileLayers) != len(withWeights) {
		return nil, fmt.Errorf("%s holds weights for %d layers (%s) but model %q has %d layers with weights: Keras 2 files load layer by layer, in order, into a model of the same layers",
			path, len(fileLayers), strings.Join(fileLayers, ", "), m.name, len(withWeights))
	}
	for i, layer := range fileLayers {
		l := withWeights[i]
		ts := perLayer[layer]
		if len(ts) != len(l.Params()) {
			return nil, fmt.Errorf("%s: layer %q of the file has %d weights, but layer %q (%s), the model's layer with weights number %d, has %d",
				path, layer, len(ts), l.Name(), l.Type(), i+1, len(l.Params()))
		}
		for j, p := range l.Params() {
			t := ts[j]
			t.Name = l.Name() + "/" + p.Name
			renamed = append(renamed, scalarAsVector(t, p.Value.Shape()))
		}
	}
	return renamed, nil
}

// The kinds of Keras file sniffKeras tells apart by their first bytes.
const (
	notKeras     = iota
	kerasHDF5    // an HDF5 file: .weights.h5, .h5
	kerasArchive // a zip archive: .keras
)

// zipSignature starts a zip archive's first local file header.
const zipSignature = "PK\x03\x04"

// scalarAsVector gives a scalar tensor of a Keras file the shape (1) when
// that is the shape of the weight it goes to: Keras keeps some counters
// as scalars (Normalization's count, an int64) that gokeras holds as
// vectors of one value.
func scalarAsVector(t safetensors.Tensor, want []int) safetensors.Tensor {
	if len(t.Shape) == 0 && len(t.Data) == 1 && len(want) == 1 && want[0] == 1 {
		t.Shape = []int{1}
	}
	return t
}

// sniffKeras says what kind of file r reads from its first bytes, and
// returns a reader that still reads all of it.
func sniffKeras(r io.Reader) (int, io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(hdf5Signature))
	if err != nil && !errors.Is(err, io.EOF) {
		return notKeras, br, err
	}
	return kerasKind(head), br, nil
}

func kerasKind(head []byte) int {
	switch {
	case bytes.HasPrefix(head, []byte(hdf5Signature)):
		return kerasHDF5
	case bytes.HasPrefix(head, []byte(zipSignature)):
		return kerasArchive
	}
	return notKeras
}

// readKerasReader is readKerasFile of everything r reads, a file of the
// given kind (HDF5 and zip need random access: what is not an
// io.ReaderAt is read into memory); size, when positive, is its size.
func readKerasReader(kind int, r io.Reader, size int64, check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
	ra, ok := r.(io.ReaderAt)
	if !ok || size <= 0 {
		var buf bytes.Buffer
		if size > 0 {
			r = io.LimitReader(r, size)
		}
		if _, err := buf.ReadFrom(r); err != nil {
			return nil, err
		}
		ra, size = bytes.NewReader(buf.Bytes()), int64(buf.Len())
	}
	if kind == kerasArchive {
		return readKerasArchive(ra, size, check)
	}
	return readKerasFile(ra, size, "", check)
}

// kerasArchiveWeights is the weights file inside a Keras 3 .keras archive.
const kerasArchiveWeights = "model.weights.h5"

// maxKerasWeights bounds the weights file read out of a .keras archive
// into memory: its declared size is checked before anything is inflated,
// and what is inflated stops there whatever the archive claims.
const maxKerasWeights = 16 << 30

// readKerasArchive reads the weights of a Keras 3 .keras archive (a zip of
// config.json, metadata.json and model.weights.h5) of size bytes. The
// model's config is not read: the weights go into a model made in code.
func readKerasArchive(r io.ReaderAt, size int64, check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("reading it as a Keras .keras archive: %w", err)
	}
	var entry, config *zip.File
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
		switch f.Name {
		case kerasArchiveWeights:
			entry = f
		case kerasArchiveConfig:
			config = f
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("a zip archive without %s (it holds %s): not a Keras 3 .keras file, or one whose weights are sharded or in .npz, which gokeras does not read",
			kerasArchiveWeights, strings.Join(names, ", "))
	}
	if entry.UncompressedSize64 > maxKerasWeights {
		return nil, fmt.Errorf("its %s declares %d bytes, more than the %d gokeras reads into memory: damaged, or not a model gokeras can hold", kerasArchiveWeights, entry.UncompressedSize64, int64(maxKerasWeights))
	}
	rc, err := entry.Open()
	if err != nil {
		return nil, fmt.Errorf("opening %s in the archive: %w", kerasArchiveWeights, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, int64(entry.UncompressedSize64)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s in the archive: %w", kerasArchiveWeights, err)
	}
	if uint64(len(data)) != entry.UncompressedSize64 {
		return nil, fmt.Errorf("%s in the archive inflates to more bytes than its declared %d: the archive is damaged", kerasArchiveWeights, entry.UncompressedSize64)
	}
	js, err := readArchiveConfig(config)
	if err != nil {
		return nil, err
	}
	f, err := readKerasFile(bytes.NewReader(data), int64(len(data)), js, check)
	if err != nil {
		return nil, fmt.Errorf("%s in the archive: %w", kerasArchiveWeights, err)
	}
	return f, nil
}

// kerasArchiveConfig is the model's config inside a .keras archive, and
// maxKerasConfig the most of it gokeras reads.
const (
	kerasArchiveConfig = "config.json"
	maxKerasConfig     = 64 << 20
)

// readArchiveConfig reads a .keras archive's config.json, "" when it has
// none.
func readArchiveConfig(f *zip.File) (string, error) {
	if f == nil {
		return "", nil
	}
	if f.UncompressedSize64 > maxKerasConfig {
		return "", fmt.Errorf("its %s declares %d bytes, more than a model config takes (%d): the archive is damaged", kerasArchiveConfig, f.UncompressedSize64, maxKerasConfig)
	}
	rc, err := f.Open()
	if err != nil {
		return "", fmt.Errorf("opening %s in the archive: %w", kerasArchiveConfig, err)
	}
	defer rc.Close()
	js, err := io.ReadAll(io.LimitReader(rc, maxKerasConfig))
	if err != nil {
		return "", fmt.Errorf("reading %s in the archive: %w", kerasArchiveConfig, err)
	}
	return string(js), nil
}

// openKerasPath reads path as a Keras file (HDF5 weights, or a .keras
// archive) when it is one: ok false means it is neither, and nothing was
// read but its first bytes.
func openKerasPath(path string, check func(map[string]string, []safetensors.Declared) error) (f *safetensors.File, ok bool, err error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, false, nil // the safetensors reader reports it
	}
	defer file.Close()
	var head [len(hdf5Signature)]byte
	n, _ := io.ReadFull(file, head[:])
	kind := kerasKind(head[:n])
	if kind == notKeras {
		return nil, false, nil
	}
	info, err := file.Stat()
	if err != nil {
		return nil, true, err
	}
	f, err = readKerasReader(kind, file, info.Size(), check)
	return f, true, err
}
