package heapsnapshot

import "math"

func (d *decoder) funcs() error {
	s, l := d.s, d.fn
	iName, iScript, iScriptID, iLine, iColumn := l.at["name"], l.at["script_name"], l.at["script_id"], l.at["line"], l.at["column"]
	n, err := d.sc.records(max(l.n, 1), sink{
		reserve: func(have, need int) {
			if c := room(cap(s.funcName), need, -1); c > cap(s.funcName) {
				s.funcName, s.funcScript, s.funcScriptID = grown(s.funcName, have, c), grown(s.funcScript, have, c), grown(s.funcScriptID, have, c)
				s.funcLine, s.funcColumn = grown(s.funcLine, have, c), grown(s.funcColumn, have, c)
			}
		},
		put: func(batch []int64, f0 int) error {
			if d.fnErr != nil {
				return d.sc.errorf("%v", d.fnErr)
			}
			k := len(batch) / l.n
			name, script, scriptID := s.funcName[f0:f0+k], s.funcScript[f0:f0+k], s.funcScriptID[f0:f0+k]
			line, column := s.funcLine[f0:f0+k], s.funcColumn[f0:f0+k]
			for j := range k {
				rec := batch[j*l.n : j*l.n+l.n]
				if !u32(rec[iName], rec[iScript], rec[iScriptID], rec[iLine], rec[iColumn]) {
					return d.sc.errorf("trace function %d: field out of range", f0+j)
				}
				name[j], script[j], scriptID[j] = uint32(rec[iName]), uint32(rec[iScript]), uint32(rec[iScriptID])
				line[j], column[j] = uint32(rec[iLine]), uint32(rec[iColumn])
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	s.funcName, s.funcScript, s.funcScriptID = s.funcName[:n], s.funcScript[:n], s.funcScriptID[:n]
	s.funcLine, s.funcColumn = s.funcLine[:n], s.funcColumn[:n]
	return nil
}

// traceNodes reads a list of trace tree nodes, each a flat record of
// trace_node_fields whose "children" field is itself such a list.
func (d *decoder) traceNodes(parent int32, depth int) error {
	if depth > maxDepth {
		return d.sc.errorf("trace_tree deeper than %d", maxDepth)
	}
	s, l := d.s, d.trace
	iID, iFunc, iChildren := l.at["id"], l.at["function_info_index"], l.at["children"]
	k, cur := 0, int32(-1)
	err := d.sc.array(func() error {
		if d.traceErr != nil {
			return d.sc.errorf("%v", d.traceErr)
		}
		if k == 0 {
			if len(s.traceParent) >= math.MaxInt32 {
				return d.sc.errorf("too many trace nodes")
			}
			cur = int32(len(s.traceParent))
			s.traceParent = append(s.traceParent, parent)
			s.traceFunc = append(s.traceFunc, 0)
			d.traceIDs = append(d.traceIDs, 0)
		}
		var err error
		switch k {
		case iChildren:
			err = d.traceNodes(cur, depth+1)
		case iID, iFunc:
			var v int64
			if v, err = d.sc.integer(); err != nil {
				return err
			}
			if !u32(v) {
				return d.sc.errorf("trace node field %d out of range", v)
			}
			if k == iID {
				d.traceIDs[cur] = uint32(v)
			} else {
				s.traceFunc[cur] = uint32(v)
			}
		default:
			err = d.sc.skip(depth + 1)
		}
		if k++; k == l.n {
			k = 0
		}
		return err
	})
	if err == nil && k != 0 {
		err = d.sc.errorf("trace_tree ends inside a node")
	}
	return err
}
