#!/usr/bin/env python3
"""Summarise callgrind profiles of bench_profile_solve: inclusive instruction counts (Ir) and
call counts of the functions the sensitivity analysis in bench/results/cpu/README.md uses
(Trajectory::run, rk4_step, rk4_tangent_step, exp, the Dual<8> terrain of the event passes).
Usage: bench/callgrind_summary.py callgrind.out...  (needs callgrind_annotate on PATH)"""
import re, subprocess, sys
def blocks(path):
    out=subprocess.run(["callgrind_annotate","--tree=caller","--inclusive=yes",path],capture_output=True,text=True).stdout
    out=re.sub(r'\(saltation::TerrainBall[^)]*\)','',out)
    out=out.replace('saltation::core::','').replace('saltation::','')
    lines=out.split('\n')
    res=[];cur=[]
    for l in lines:
        if not l.strip():
            if cur: res.append(cur); cur=[]
            continue
        cur.append(l)
    return res,out
def num(s): return int(s.split()[0].replace(',',''))
for path in sys.argv[1:]:
    bl,out=blocks(path)
    total=int(re.search(r'([\d,]+) \(100.0%\)\s+PROGRAM TOTALS',out).group(1).replace(',',''))
    print("==",path,"total Ir",total)
    for b in bl:
        star=[l for l in b if re.match(r'^\s*[\d,]+ \([ \d.]+%\)\s+\*',l)]
        if not star: continue
        s=star[0]
        m=re.search(r'\*\s+(\S+?):(.*?)( \[|$)',s)
        if not m: continue
        fn=m.group(2)
        key=None
        for k in ['rk4_tangent_step','rk4_step','terrain<Dual<','exp@@','Trajectory<','memset','__libc_calloc','malloc','Result::Result','validate_batch']:
            if k in fn: key=k;break
        if not key: continue
        if key=='Trajectory<' and 'run()' not in fn: continue
        if key=='Trajectory<' and '[' not in s: continue
        if key=='exp@@' and 'w_exp_template' not in s: continue
        if key in ('rk4_step','rk4_tangent_step','terrain<Dual<') and '[' not in s: continue
        callers=[l for l in b if '<' in l.split('%)')[1][:4]] if True else []
        print(f"  {key:18s} incl {num(s):>12,d} ({100*num(s)/total:5.1f}%)")
        for c in callers:
            cm=re.search(r'\(([\d,]+)x\)',c)
            cn=re.search(r':(.*?)(\(| \[|$)',c.split('<',1)[1])
            print(f"      from {cn.group(1)[:70]:70s} {num(c):>12,d}  calls {cm.group(1) if cm else '?'}")
