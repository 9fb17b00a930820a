const B=process.env.GW; const [code,n]=process.argv.slice(2);
const rs=await Promise.all(Array.from({length:+n},(_,i)=>fetch(B+'/console/api/signup',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({email:`inv${i}@example.com`,password:'longpassword123',invite:code})}).then(async r=>r.status+' '+(await r.text()).slice(0,120))));
const c={}; for(const r of rs) c[r]=(c[r]||0)+1; console.log(c);
