// hydro.cpp: a hydrodynamics proxy in LULESH's C++ style (build with `conifer cxx` or
// mpicxx; not in the Makefile).
//
// A Domain class holds the mesh's nodal and element fields as std::vector<double> members
// behind accessors returning double&; the halo exchange packs and unpacks fields called
// through pointers to members, `double& (Domain::*)(int)`, as LULESH's CommSend and CommSBN
// do (one of them, `q`, virtual, so its member pointer is a vtable offset). The mesh is
// split into slabs along z: each rank has NX x NX x NZ elements and exchanges one plane of
// nodal fields (x, y, z, xd, yd, zd: 6 * (NX+1)^2 doubles) with each of its neighbours below
// and above per cycle, with MPI_Irecv, MPI_Isend and MPI_Waitall, then one plane of element
// fields (e, q: 2 * NX^2 doubles). Each cycle computes forces from pressure and artificial
// viscosity, moves the nodes, updates volumes, energy and pressure through an equation of
// state, and takes the time step as the MPI_Allreduce minimum (MPI_MIN) of the Courant and
// volume-change limits. The run takes a fixed number of cycles (LULESH's `-i`), so the time
// step decides no message; a run to a stop time would (the loop's exit would read it).
// Rank 0 prints progress and the final energy (MPI_Reduce) with std::cout.
//
// Usage: hydro [CYCLES [NX [NZ]]] (defaults 20, 16, 16).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

class Domain {
public:
    Domain(int rank, int size, int nx, int nz)
        : m_rank(rank), m_size(size), m_nx(nx), m_nz(nz), m_name("slab " + std::to_string(rank)) {
        int nodes = numNode(), elems = numElem();
        m_x.resize(nodes);
        m_y.resize(nodes);
        m_z.resize(nodes);
        m_xd.assign(nodes, 0.0);
        m_yd.assign(nodes, 0.0);
        m_zd.assign(nodes, 0.0);
        m_fx.assign(nodes, 0.0);
        m_fy.assign(nodes, 0.0);
        m_fz.assign(nodes, 0.0);
        m_e.assign(elems, 0.0);
        m_p.assign(elems, 0.0);
        m_q.assign(elems, 0.0);
        m_v.assign(elems, 1.0);
        m_vdov.assign(elems, 0.0);
        for (int k = 0; k <= nz; k++)
            for (int j = 0; j <= nx; j++)
                for (int i = 0; i <= nx; i++) {
                    int n = node(i, j, k);
                    m_x[n] = i * 1.125 / nx;
                    m_y[n] = j * 1.125 / nx;
                    m_z[n] = (rank * nz + k) * 1.125 / (nz * size);
                }
        // The Sedov problem's energy deposit in the first element of rank 0.
        if (rank == 0)
            m_e[0] = 3.948746e+7;
    }
    virtual ~Domain() {}

    double &x(int n) { return m_x[n]; }
    double &y(int n) { return m_y[n]; }
    double &z(int n) { return m_z[n]; }
    double &xd(int n) { return m_xd[n]; }
    double &yd(int n) { return m_yd[n]; }
    double &zd(int n) { return m_zd[n]; }
    double &fx(int n) { return m_fx[n]; }
    double &fy(int n) { return m_fy[n]; }
    double &fz(int n) { return m_fz[n]; }
    double &e(int k) { return m_e[k]; }
    double &p(int k) { return m_p[k]; }
    virtual double &q(int k) { return m_q[k]; }
    double &v(int k) { return m_v[k]; }
    double &vdov(int k) { return m_vdov[k]; }

    int nx() const { return m_nx; }
    int nz() const { return m_nz; }
    int rank() const { return m_rank; }
    int size() const { return m_size; }
    int numNode() const { return (m_nx + 1) * (m_nx + 1) * (m_nz + 1); }
    int numElem() const { return m_nx * m_nx * m_nz; }
    int node(int i, int j, int k) const { return (k * (m_nx + 1) + j) * (m_nx + 1) + i; }
    int elem(int i, int j, int k) const { return (k * m_nx + j) * m_nx + i; }
    const std::string &name() const { return m_name; }

    double time = 0, deltatime = 1e-7;
    int cycle = 0;
    std::vector<double> commDataSend, commDataRecv;
    std::vector<MPI_Request> requests;

private:
    int m_rank, m_size, m_nx, m_nz;
    std::string m_name;
    std::vector<double> m_x, m_y, m_z, m_xd, m_yd, m_zd, m_fx, m_fy, m_fz;
    std::vector<double> m_e, m_p, m_q, m_v, m_vdov;
};

typedef double &(Domain::*Domain_member)(int);

/// Posts the receives of `fields` planes of `plane` values from each neighbour.
static void CommRecv(Domain &dom, int tag, int fields, int plane) {
    dom.requests.clear();
    dom.commDataRecv.resize(2 * fields * plane);
    int at = 0;
    for (int side = -1; side <= 1; side += 2) {
        int peer = dom.rank() + side;
        if (peer < 0 || peer >= dom.size())
            continue;
        MPI_Request r;
        MPI_Irecv(&dom.commDataRecv[at], fields * plane, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD,
                  &r);
        dom.requests.push_back(r);
        at += fields * plane;
    }
}

/// Packs `fields` fields of the bottom and top planes (`z` index `lo` and `hi`) through
/// member pointers and sends them; `nodal` says whether they are nodal or element fields.
static void CommSend(Domain &dom, int tag, int fields, Domain_member *fieldData, bool nodal) {
    int n = nodal ? dom.nx() + 1 : dom.nx();
    int plane = n * n;
    dom.commDataSend.resize(2 * fields * plane);
    int at = 0;
    for (int side = -1; side <= 1; side += 2) {
        int peer = dom.rank() + side;
        if (peer < 0 || peer >= dom.size())
            continue;
        int k = side < 0 ? 0 : (nodal ? dom.nz() : dom.nz() - 1);
        double *buf = &dom.commDataSend[at];
        for (int f = 0; f < fields; f++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) {
                    int idx = nodal ? dom.node(i, j, k) : dom.elem(i, j, k);
                    buf[f * plane + j * n + i] = (dom.*fieldData[f])(idx);
                }
        MPI_Request r;
        MPI_Isend(buf, fields * plane, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &r);
        dom.requests.push_back(r);
        at += fields * plane;
    }
}

/// Waits for the exchange and sums what arrived into the boundary planes (LULESH's CommSBN).
static void CommSBN(Domain &dom, int fields, Domain_member *fieldData, bool nodal) {
    MPI_Waitall(int(dom.requests.size()), dom.requests.data(), MPI_STATUSES_IGNORE);
    int n = nodal ? dom.nx() + 1 : dom.nx();
    int plane = n * n, at = 0;
    for (int side = -1; side <= 1; side += 2) {
        int peer = dom.rank() + side;
        if (peer < 0 || peer >= dom.size())
            continue;
        int k = side < 0 ? 0 : (nodal ? dom.nz() : dom.nz() - 1);
        for (int f = 0; f < fields; f++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) {
                    int idx = nodal ? dom.node(i, j, k) : dom.elem(i, j, k);
                    (dom.*fieldData[f])(idx) += 0.5 * dom.commDataRecv[at + f * plane + j * n + i];
                }
        at += fields * plane;
    }
}

/// Forces on the nodes from each element's pressure and viscosity.
static void CalcForceForNodes(Domain &dom) {
    int nx = dom.nx();
    std::fill(&dom.fx(0), &dom.fx(0) + dom.numNode(), 0.0);
    std::fill(&dom.fy(0), &dom.fy(0) + dom.numNode(), 0.0);
    std::fill(&dom.fz(0), &dom.fz(0) + dom.numNode(), 0.0);
    for (int k = 0; k < dom.nz(); k++)
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < nx; i++) {
                int el = dom.elem(i, j, k);
                double s = -(dom.p(el) + dom.q(el)) * 0.25;
                for (int c = 0; c < 8; c++) {
                    int n = dom.node(i + (c & 1), j + ((c >> 1) & 1), k + (c >> 2));
                    double dx = dom.x(n) - dom.x(dom.node(i, j, k)) - 0.5;
                    double dy = dom.y(n) - dom.y(dom.node(i, j, k)) - 0.5;
                    double dz = dom.z(n) - dom.z(dom.node(i, j, k)) - 0.5;
                    dom.fx(n) += s * dx;
                    dom.fy(n) += s * dy;
                    dom.fz(n) += s * dz;
                }
            }
}

/// Accelerations, velocities and positions of the nodes.
static void CalcPositionForNodes(Domain &dom, double dt) {
    for (int n = 0; n < dom.numNode(); n++) {
        dom.xd(n) += dom.fx(n) * dt * 1e-3;
        dom.yd(n) += dom.fy(n) * dt * 1e-3;
        dom.zd(n) += dom.fz(n) * dt * 1e-3;
        dom.x(n) += dom.xd(n) * dt;
        dom.y(n) += dom.yd(n) * dt;
        dom.z(n) += dom.zd(n) * dt;
    }
}

/// Volumes, viscosity, energy and pressure of the elements (an ideal-gas equation of state).
static void ApplyMaterialProperties(Domain &dom, double dt) {
    int nx = dom.nx();
    for (int k = 0; k < dom.nz(); k++)
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < nx; i++) {
                int el = dom.elem(i, j, k);
                double div = 0;
                for (int c = 0; c < 8; c++) {
                    int n = dom.node(i + (c & 1), j + ((c >> 1) & 1), k + (c >> 2));
                    div += (c & 1 ? 1 : -1) * dom.xd(n) + ((c >> 1) & 1 ? 1 : -1) * dom.yd(n) +
                           (c >> 2 ? 1 : -1) * dom.zd(n);
                }
                double vnew = std::max(dom.v(el) * (1 + div * dt), 1e-10);
                dom.vdov(el) = div;
                dom.q(el) = div < 0 ? 2.0 * div * div * dom.v(el) : 0.0;
                dom.e(el) = std::max(dom.e(el) - (dom.p(el) + dom.q(el)) * (vnew - dom.v(el)), 0.0);
                dom.p(el) = (2.0 / 3.0) * dom.e(el) / vnew;
                dom.v(el) = vnew;
            }
}

/// The largest stable time step on this rank: Courant and volume-change limits.
static double CalcTimeConstraints(Domain &dom) {
    double dtcourant = 1e20, dthydro = 1e20;
    for (int el = 0; el < dom.numElem(); el++) {
        double ss = std::sqrt(std::max(dom.p(el) * dom.v(el), 1e-36) + 1e-12);
        double len = 1.125 / dom.nx();
        dtcourant = std::min(dtcourant, len / (ss + std::fabs(dom.vdov(el)) * len + 1e-20));
        if (dom.vdov(el) != 0)
            dthydro = std::min(dthydro, 0.1 / (std::fabs(dom.vdov(el)) + 1e-20));
    }
    return std::min(dtcourant / 2, dthydro * 2 / 3);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int cycles = argc > 1 ? std::atoi(argv[1]) : 20;
    int nx = argc > 2 ? std::atoi(argv[2]) : 16;
    int nz = argc > 3 ? std::atoi(argv[3]) : 16;
    Domain *dom = new Domain(rank, size, nx, nz);
    Domain_member nodal[6] = {&Domain::x,  &Domain::y,  &Domain::z,
                              &Domain::xd, &Domain::yd, &Domain::zd};
    Domain_member element[2] = {&Domain::e, &Domain::q};
    int nodePlane = (nx + 1) * (nx + 1), elemPlane = nx * nx;
    while (dom->cycle < cycles) {
        CommRecv(*dom, 1, 6, nodePlane);
        CalcForceForNodes(*dom);
        CalcPositionForNodes(*dom, dom->deltatime);
        CommSend(*dom, 1, 6, nodal, true);
        CommSBN(*dom, 6, nodal, true);
        ApplyMaterialProperties(*dom, dom->deltatime);
        CommRecv(*dom, 2, 2, elemPlane);
        CommSend(*dom, 2, 2, element, false);
        CommSBN(*dom, 2, element, false);
        double local = CalcTimeConstraints(*dom), dt;
        MPI_Allreduce(&local, &dt, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        dom->deltatime = std::min(dt, 1.1 * dom->deltatime);
        dom->time += dom->deltatime;
        dom->cycle++;
        if (rank == 0 && dom->cycle % 10 == 0)
            std::cout << "cycle " << dom->cycle << " time " << dom->time << " dt "
                      << dom->deltatime << std::endl;
    }
    double energy = 0, total = 0;
    for (int el = 0; el < dom->numElem(); el++)
        energy += dom->e(el);
    MPI_Reduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        std::cout << dom->name() << ": " << dom->cycle << " cycles, final energy " << total
                  << std::endl;
    delete dom;
    MPI_Finalize();
    return 0;
}
