package redisstore

// One argument type per script (args.go): the fields' tags name the
// script's KEYS and ARGV in the order of its header comment.

type activeArgs struct {
	Active  string `key:"active"`
	Tickets string `key:"tickets"`
	Base    string `key:"base"`
	ID      string `arg:"id"`
	Now     int64  `arg:"now"`
}

type aliveArgs struct {
	Seen    string   `key:"seen"`
	Base    string   `key:"base"`
	Q       string   `key:"q"`
	Now     int64    `arg:"now"`
	Members []string `arg:"members"`
}

type arriveArgs struct {
	Active  string `key:"active"`
	Tickets string `key:"tickets"`
	Base    string `key:"base"`
	ID      string `arg:"id"`
	Now     int64  `arg:"now"`
	Idle    int64  `arg:"idle"`
	Step    int64  `arg:"step"`
}

type completeArgs struct {
	Tickets string `key:"tickets"`
	Active  string `key:"active"`
	Stats   string `key:"stats"`
	Ended   string `key:"ended"`
	Base    string `key:"base"`
	ID      string `arg:"id"`
	Now     int64  `arg:"now"`
}

type drawArgs struct {
	Pre       string   `key:"pre"`
	Q         string   `key:"q"`
	Seen      string   `key:"seen"`
	Tickets   string   `key:"tickets"`
	Draw      string   `key:"draw"`
	Stats     string   `key:"stats"`
	Log       string   `key:"log"`
	Base      string   `key:"base"`
	Opens     int64    `arg:"opens"`
	Now       int64    `arg:"now"`
	Server    string   `arg:"server"`
	OrderHash string   `arg:"order_hash"`
	Channel   string   `arg:"channel"`
	MaxMoved  int64    `arg:"max_moved"`
	Order     []string `arg:"order"`
}

type enterArgs struct {
	Base   string     `key:"base"`
	Enters []enterOne `arg:"enters"`
}

// enterOne is one enter of a batch: its identity, the room's admission
// settings as they were read for it, and its proof.
type enterOne struct {
	Identity   string `each:"identity"`
	Tail       string `each:"tail"`
	Now        int64  `each:"now"`
	Mode       string `each:"mode"`
	Capacity   int64  `each:"capacity"`
	BatchSize  int64  `each:"batch_size"`
	Interval   int64  `each:"interval"`
	Orderable  int64  `each:"orderable"`
	TTL        int64  `each:"ttl"`
	Window     int64  `each:"window"`
	Proof      string `each:"proof"`
	ProofTTL   int64  `each:"proof_ttl"`
	ProofID    string `each:"proof_id"`
	MaxWaiting int64  `each:"max_waiting"`
	Packed     string `each:"packed"`
	Field      string `each:"field"`
	Now36      string `each:"now36"`
	TailBytes  string `each:"tail_bytes"`
	Network    string `each:"network"`
	Unarrived  int64  `each:"unarrived"`
}

type handoffArgs struct {
	Code      string `key:"code"`
	HolderKey string `key:"holder"`
	CodeTTL   int64  `arg:"code_ttl"`
	Holder    string `arg:"holder"`
	HoldTTL   int64  `arg:"hold_ttl"`
}

type heldArgs struct {
	Visitors string `key:"visitors"`
	Tickets  string `key:"tickets"`
	Places   string `key:"places"`
	Stats    string `key:"stats"`
	Base     string `key:"base"`
	Now      int64  `arg:"now"`
	Window   int64  `arg:"window"`
	Sweep    int64  `arg:"sweep"`
}

type holdArgs struct {
	Tickets   string `key:"tickets"`
	HolderKey string `key:"holder"`
	Base      string `key:"base"`
	ID        string `arg:"id"`
	Holder    string `arg:"holder"`
	TTL       int64  `arg:"ttl"`
	Mode      string `arg:"mode"`
	Packed    string `arg:"packed"`
}

type leaseArgs struct {
	Admitter string `key:"admitter"`
	Holder   string `arg:"holder"`
	Now      int64  `arg:"now"`
	TTL      int64  `arg:"ttl"`
	Interval int64  `arg:"interval"`
	Admitted int64  `arg:"admitted"`
	Kept     int64  `arg:"kept"`
}

type leaveArgs struct {
	Tickets  string `key:"tickets"`
	Q        string `key:"q"`
	Seen     string `key:"seen"`
	Active   string `key:"active"`
	Ended    string `key:"ended"`
	Pre      string `key:"pre"`
	Stats    string `key:"stats"`
	Log      string `key:"log"`
	Base     string `key:"base"`
	ID       string `arg:"id"`
	Identity string `arg:"identity"`
	Now      int64  `arg:"now"`
	Packed   string `arg:"packed"`
}

type placesArgs struct {
	Visitors string `key:"visitors"`
	Tickets  string `key:"tickets"`
	Places   string `key:"places"`
	Stats    string `key:"stats"`
	Base     string `key:"base"`
	Identity string `arg:"identity"`
	Now      int64  `arg:"now"`
	Limit    int64  `arg:"limit"`
	Window   int64  `arg:"window"`
	Life     int64  `arg:"life"`
}

type presentArgs struct {
	Q       string `key:"q"`
	Present string `key:"present"`
	Bits    string `key:"bits"`
	Server  string `arg:"server"`
	Now     int64  `arg:"now"`
	Lo      string `arg:"lo"`
	Bitmap  string `arg:"bitmap"`
}

type renewArgs struct {
	Epoch string `key:"epoch"`
	Stale string `arg:"stale"`
	Next  string `arg:"next"`
}

type restoreArgs struct {
	SettingsKey string `key:"settings"`
	Budget      string `key:"budget"`
	Settings    string `arg:"settings"`
	Capacity    int64  `arg:"capacity"`
	HoldUntil   int64  `arg:"hold_until"`
}

type retireArgs struct {
	Tickets  string   `key:"tickets"`
	Seen     string   `key:"seen"`
	Visitors string   `key:"visitors"`
	Stats    string   `key:"stats"`
	Base     string   `key:"base"`
	Members  []string `arg:"members"`
}

type statusArgs struct {
	Tickets  string `key:"tickets"`
	Q        string `key:"q"`
	Seen     string `key:"seen"`
	Stats    string `key:"stats"`
	Base     string `key:"base"`
	ID       string `arg:"id"`
	Identity string `arg:"identity"`
	Now      int64  `arg:"now"`
	Packed   string `arg:"packed"`
}

type tickArgs struct {
	Q             string   `key:"q"`
	Seen          string   `key:"seen"`
	Active        string   `key:"active"`
	Tickets       string   `key:"tickets"`
	Budget        string   `key:"budget"`
	Stats         string   `key:"stats"`
	Admits        string   `key:"admits"`
	Ended         string   `key:"ended"`
	Visitors      string   `key:"visitors"`
	Log           string   `key:"log"`
	Base          string   `key:"base"`
	Present       string   `key:"present"`
	Now           int64    `arg:"now"`
	Interval      int64    `arg:"interval"`
	BatchSize     int64    `arg:"batch_size"`
	Capacity      int64    `arg:"capacity"`
	AbandonBefore int64    `arg:"abandon_before"`
	Paused        bool     `arg:"paused"`
	TTL           int64    `arg:"ttl"`
	MaxScan       int64    `arg:"max_scan"`
	Rate          string   `arg:"rate"`
	Channel       string   `arg:"channel"`
	PurgeBefore   int64    `arg:"purge_before"`
	Window        int64    `arg:"window"`
	Unarrived     int64    `arg:"unarrived"`
	Jitters       []int64  `arg:"jitters"`
	Draws         []string `arg:"draws"`
}

func (activeArgs) script() *script   { return activeScript }
func (aliveArgs) script() *script    { return aliveScript }
func (arriveArgs) script() *script   { return arriveScript }
func (completeArgs) script() *script { return completeScript }
func (drawArgs) script() *script     { return drawScript }
func (enterArgs) script() *script    { return enterScript }
func (handoffArgs) script() *script  { return handoffScript }
func (heldArgs) script() *script     { return heldScript }
func (holdArgs) script() *script     { return holdScript }
func (leaseArgs) script() *script    { return leaseScript }
func (leaveArgs) script() *script    { return leaveScript }
func (placesArgs) script() *script   { return placesScript }
func (presentArgs) script() *script  { return presentScript }
func (renewArgs) script() *script    { return renewScript }
func (restoreArgs) script() *script  { return restoreScript }
func (retireArgs) script() *script   { return retireScript }
func (statusArgs) script() *script   { return statusScript }
func (tickArgs) script() *script     { return tickScript }
