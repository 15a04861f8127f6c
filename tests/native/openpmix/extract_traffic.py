# The TCP payloads of an strace -f -yy -xx log (conn_server.c), one line per write:
# "C>S|S>C <bytes> <hex>"; the client is the side that writes first.
import re,sys
lines=open(sys.argv[1]).read().splitlines()
pending={}
port=None
for l in lines:
    m=re.match(r'(\d+) (.*)',l)
    if not m: continue
    pid,rest=m.groups()
    if '<unfinished ...>' in rest:
        pending[pid]=rest.replace(' <unfinished ...>',''); continue
    m2=re.match(r'<\.\.\. (\w+) resumed>(.*)',rest)
    if m2 and pid in pending: rest=pending.pop(pid)+m2.group(2)
    mw=re.match(r'(write|read|sendto|recvfrom|sendmsg|recvmsg|writev|readv)\(\d+<TCP:\[127\.0\.0\.1:(\d+)->127\.0\.0\.1:(\d+)\]>, (.*)\) += (\d+)',rest)
    if not mw: continue
    call,lp,rp,args,n=mw.groups()
    if int(n)==0: continue
    data=b''.join(bytes.fromhex(''.join(re.findall(r'\\x([0-9a-f]{2})',s))) for s in re.findall(r'"((?:\\x[0-9a-f]{2})*)"',args))[:int(n)]
    if call in('write','sendto','sendmsg','writev'):
        if port is None: port=lp  # the client writes first
        d='C>S' if lp==port else 'S>C'
        print(d,len(data),data.hex(' '))
